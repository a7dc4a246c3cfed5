using System.Linq.Expressions;

namespace Saito.Server.Api;

/// <summary>The "from, to" filter of the histories (alerts, vital-sign views), in the API and on their pages.</summary>
internal static class TimeFilter
{
    /// <summary>The rows whose instant <paramref name="at"/> is at or after <paramref name="from"/> and before <paramref name="to"/>; a bound left null does not filter.</summary>
    public static IQueryable<T> Within<T>(this IQueryable<T> rows, Expression<Func<T, DateTimeOffset>> at, DateTimeOffset? from, DateTimeOffset? to)
    {
        if (from is { } start)
        {
            rows = rows.Where(Compare(at, start, Expression.GreaterThanOrEqual));
        }

        if (to is { } end)
        {
            rows = rows.Where(Compare(at, end, Expression.LessThan));
        }

        return rows;
    }

    // The bound is read from a closure, as a lambda's captured variable is, so EF Core sends it as a parameter (one
    // cached query plan) rather than as a constant in the SQL.
    private static Expression<Func<T, bool>> Compare<T>(Expression<Func<T, DateTimeOffset>> at, DateTimeOffset bound,
        Func<Expression, Expression, BinaryExpression> compare)
    {
        Expression<Func<DateTimeOffset>> value = () => bound;
        return Expression.Lambda<Func<T, bool>>(compare(at.Body, value.Body), at.Parameters);
    }
}
