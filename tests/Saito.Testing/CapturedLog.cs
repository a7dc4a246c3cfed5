using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;

namespace Saito.Testing;

/// <summary>
/// The server's log lines from <paramref name="minimumLevel"/> up (Warning unless told), each with its time, level,
/// category, event id and named values: <c>builder =&gt; builder.Logging.AddProvider(logs)</c>. Saito's own logging
/// configuration filters first, so a test that wants Information lines also sets <c>Logging:LogLevel:...</c> to let them through.
/// </summary>
public sealed class CapturedLog(LogLevel minimumLevel = LogLevel.Warning) : ILoggerProvider
{
    private readonly ConcurrentQueue<LogEntry> _entries = new();

    /// <summary>The text of every line with <paramref name="eventId"/>.</summary>
    public List<string> Lines(int eventId) => [.. _entries.Where(l => l.EventId == eventId).Select(l => l.Text)];

    /// <summary>Every line so far, in order.</summary>
    public List<LogEntry> Entries => [.. _entries];

    /// <summary>Every line logged at or after <paramref name="from"/> (UTC), in order.</summary>
    public List<LogEntry> Since(DateTime from) => [.. _entries.Where(e => e.At >= from)];

    public ILogger CreateLogger(string categoryName) => new Sink(categoryName, minimumLevel, _entries);

    public void Dispose()
    {
    }

    private sealed class Sink(string category, LogLevel minimumLevel, ConcurrentQueue<LogEntry> entries) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= minimumLevel && logLevel != LogLevel.None;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (!IsEnabled(logLevel))
            {
                return;
            }

            // [LoggerMessage] state is its named values (and "{OriginalFormat}"): kept, so a test reads counts, not text.
            var values = state is IReadOnlyList<KeyValuePair<string, object?>> pairs
                ? pairs.ToDictionary(p => p.Key, p => p.Value, StringComparer.Ordinal)
                : [];
            entries.Enqueue(new LogEntry(DateTime.UtcNow, logLevel, category, eventId.Id, formatter(state, exception), values, exception?.ToString()));
        }
    }
}

/// <summary>One line of a <see cref="CapturedLog"/>.</summary>
public sealed record LogEntry(
    DateTime At, LogLevel Level, string Category, int EventId, string Text, IReadOnlyDictionary<string, object?> Values, string? Exception)
{
    /// <summary>Lines the entry takes in a log file: its text, and a stack trace's lines when it carries an exception.</summary>
    public int Lines => Text.Split('\n').Length + (Exception?.Split('\n').Length ?? 0);

    /// <summary>The named value <paramref name="name"/> as a number (a count of a [LoggerMessage] line).</summary>
    public long Count(string name) => Convert.ToInt64(Values[name], System.Globalization.CultureInfo.InvariantCulture);

    public override string ToString() => $"{At:HH:mm:ss.fff} {Level} {Category}[{EventId}] {Text}";
}
