using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;

namespace Saito.Mqtt.Tests.Infrastructure;

/// <summary>The server's log lines at Warning and above, by event id: <c>builder =&gt; builder.Logging.AddProvider(logs)</c>.</summary>
internal sealed class CapturedLog : ILoggerProvider
{
    private readonly ConcurrentQueue<(int EventId, string Text)> _lines = new();

    public List<string> Lines(int eventId) => [.. _lines.Where(l => l.EventId == eventId).Select(l => l.Text)];

    public ILogger CreateLogger(string categoryName) => new Sink(_lines);

    public void Dispose()
    {
    }

    private sealed class Sink(ConcurrentQueue<(int, string)> lines) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Warning;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
            lines.Enqueue((eventId.Id, formatter(state, exception)));
    }
}
