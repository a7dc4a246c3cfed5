namespace Saito.Testing;

/// <summary>An external MQTT client failed, timed out or printed something unexpected. The message
/// carries the command line, the exit code and the client's stderr.</summary>
public sealed class ExternalClientException : Exception
{
    public ExternalClientException()
    {
    }

    public ExternalClientException(string message)
        : base(message)
    {
    }

    public ExternalClientException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
