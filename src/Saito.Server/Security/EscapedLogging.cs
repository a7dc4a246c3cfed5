using System.Collections;
using System.Text;
using Saito.Mqtt.Broker;

namespace Saito.Server.Security;

/// <summary>
/// The logging boundary: every logger Saito's host hands out escapes control characters (C0 and C1, DEL, U+2028, U+2029;
/// <see cref="LogText.NeedsEscape"/>) in the formatted message and in each string value of its state, before any provider
/// (console, systemd's journal through the console, JSON) sees them. A client's topic, client id or user name, a Host
/// header, a staff member's input: whatever a call site logs, a <c>\n</c>, <c>\r</c> or ESC in it is written as
/// <c>\n</c>, <c>\r</c> or <c>\u001b</c> and cannot forge a line or drive the terminal. Call sites that escape themselves
/// (<see cref="LogText.Safe"/>, which also shortens) keep doing so; this is the guarantee when one does not.
/// </summary>
/// <remarks>
/// The logger factory is decorated rather than each provider, so the filter rules per provider
/// (<c>Logging:Console:LogLevel</c>) keep matching the providers' own types. An exception's text (its message and stack
/// trace, several lines by nature) is passed as it is.
/// </remarks>
public static class EscapedLogging
{
    /// <summary>Replaces the host's <see cref="ILoggerFactory"/> with one whose loggers escape (call after the providers are added).</summary>
    public static IServiceCollection AddEscapedLogging(this IServiceCollection services)
    {
        ArgumentNullException.ThrowIfNull(services);
        var factory = services.LastOrDefault(d => d.ServiceType == typeof(ILoggerFactory));
        if (factory is not { ImplementationType: { } type } || type == typeof(EscapingLoggerFactory))
        {
            return services;
        }

        services.Remove(factory);
        services.Add(ServiceDescriptor.Singleton(type, type));
        services.AddSingleton<ILoggerFactory>(sp => new EscapingLoggerFactory((ILoggerFactory)sp.GetRequiredService(type)));
        return services;
    }

    /// <summary><paramref name="text"/> with each character <see cref="LogText.NeedsEscape"/> names written as an escape; the same string when there is none.</summary>
    public static string Escape(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        if (!LogText.HasControlCharacters(text))
        {
            return text;
        }

        var builder = new StringBuilder(text.Length + 16);
        foreach (char c in text)
        {
            _ = c switch
            {
                '\n' => builder.Append("\\n"),
                '\r' => builder.Append("\\r"),
                '\t' => builder.Append("\\t"),
                _ when LogText.NeedsEscape(c) => builder.Append("\\u").Append(((int)c).ToString("x4", System.Globalization.CultureInfo.InvariantCulture)),
                _ => builder.Append(c),
            };
        }

        return builder.ToString();
    }

    private sealed class EscapingLoggerFactory(ILoggerFactory inner) : ILoggerFactory
    {
        public ILogger CreateLogger(string categoryName) => new EscapingLogger(inner.CreateLogger(categoryName));

        public void AddProvider(ILoggerProvider provider) => inner.AddProvider(provider);

        // The inner factory is the container's and is disposed by it.
        public void Dispose()
        {
        }
    }

    private sealed class EscapingLogger(ILogger inner) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => inner.BeginScope(state);

        public bool IsEnabled(LogLevel logLevel) => inner.IsEnabled(logLevel);

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (!inner.IsEnabled(logLevel))
            {
                return;
            }

            string message = formatter(state, exception);
            if (!LogText.HasControlCharacters(message) && !EscapedState.Needed(state))
            {
                inner.Log(logLevel, eventId, state, exception, formatter);
                return;
            }

            inner.Log(logLevel, eventId, new EscapedState(state, Escape(message)), exception, static (s, _) => s.Message);
        }
    }

    /// <summary>A log call's state with its string values escaped, and its message escaped; structured providers read the values.</summary>
    private sealed class EscapedState : IReadOnlyList<KeyValuePair<string, object?>>
    {
        private readonly KeyValuePair<string, object?>[] _values;

        public EscapedState(object? state, string message)
        {
            Message = message;
            _values = state is IEnumerable<KeyValuePair<string, object?>> values
                ? [.. values.Select(v => v.Value is string text ? new KeyValuePair<string, object?>(v.Key, Escape(text)) : v)]
                : [];
        }

        public string Message { get; }

        public int Count => _values.Length;

        public KeyValuePair<string, object?> this[int index] => _values[index];

        public static bool Needed(object? state) =>
            state is IEnumerable<KeyValuePair<string, object?>> values && values.Any(v => v.Value is string text && LogText.HasControlCharacters(text));

        public IEnumerator<KeyValuePair<string, object?>> GetEnumerator() => ((IEnumerable<KeyValuePair<string, object?>>)_values).GetEnumerator();

        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

        public override string ToString() => Message;
    }
}
