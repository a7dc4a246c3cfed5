using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;

namespace Saito.Ingestion.Tests.Infrastructure;

/// <summary>One entry of the server's log: what a console or journal would get.</summary>
public sealed record LoggedEntry(DateTime At, LogLevel Level, string Category, int EventId, string Text, string? Exception)
{
    /// <summary>Lines the entry takes in a log file: its text, and a stack trace's lines when it carries an exception.</summary>
    public int Lines => Text.Split('\n').Length + (Exception?.Split('\n').Length ?? 0);
}

/// <summary>
/// Records what Saito logs, at the levels its configuration lets through (<c>builder =&gt; builder.Logging.AddProvider(log)</c>),
/// so a test can hold the log's size, not only its content.
/// </summary>
public sealed class LogRecorder : ILoggerProvider
{
    private readonly ConcurrentQueue<LoggedEntry> _entries = new();

    public IReadOnlyList<LoggedEntry> Since(DateTime from) => [.. _entries.Where(e => e.At >= from)];

    public ILogger CreateLogger(string categoryName) => new Sink(categoryName, _entries);

    public void Dispose()
    {
    }

    private sealed class Sink(string category, ConcurrentQueue<LoggedEntry> entries) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel != LogLevel.None;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
            entries.Enqueue(new LoggedEntry(DateTime.UtcNow, logLevel, category, eventId.Id, formatter(state, exception), exception?.ToString()));
    }
}
