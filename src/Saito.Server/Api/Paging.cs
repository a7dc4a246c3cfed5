using System.ComponentModel.DataAnnotations;
using Microsoft.EntityFrameworkCore;

namespace Saito.Server.Api;

/// <summary><c>?offset=0&amp;limit=50</c> on every list: at most <see cref="MaxLimit"/> items a page.</summary>
public sealed class PageQuery
{
    public const int DefaultLimit = 50;
    public const int MaxLimit = 500;

    [Range(0, int.MaxValue)]
    public int? Offset { get; set; }

    [Range(1, MaxLimit)]
    public int? Limit { get; set; }
}

/// <summary>One page of a list: the items, where it starts, its size, and how many there are in all.</summary>
public sealed record Page<T>(IReadOnlyList<T> Items, int Offset, int Limit, int Total);

internal static class Paging
{
    public static async Task<Page<TView>> PageAsync<TEntity, TView>(this IQueryable<TEntity> query, PageQuery page, Func<TEntity, TView> view, CancellationToken cancellationToken)
    {
        int offset = page.Offset ?? 0;
        int limit = page.Limit ?? PageQuery.DefaultLimit;
        int total = await query.CountAsync(cancellationToken);
        var items = await query.Skip(offset).Take(limit).ToListAsync(cancellationToken);
        return new Page<TView>(items.ConvertAll(i => view(i)), offset, limit, total);
    }
}
