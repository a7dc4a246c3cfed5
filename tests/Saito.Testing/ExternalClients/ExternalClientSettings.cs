namespace Saito.Testing;

/// <summary>
/// Where the external clients live. Each can be overridden through an environment variable;
/// <c>scripts/test.sh</c> sets them, and the defaults match a Debian 12 machine.
/// </summary>
public static class ExternalClientSettings
{
    /// <summary>Debian's python, which has python3-paho-mqtt (a pyenv python on PATH may not).</summary>
    public static string Python => Environment.GetEnvironmentVariable("SAITO_TEST_PYTHON") ?? "/usr/bin/python3";

    public static string Node => Environment.GetEnvironmentVariable("SAITO_TEST_NODE") ?? "node";

    public static string MosquittoPub => Environment.GetEnvironmentVariable("SAITO_TEST_MOSQUITTO_PUB") ?? "/usr/bin/mosquitto_pub";

    public static string MosquittoSub => Environment.GetEnvironmentVariable("SAITO_TEST_MOSQUITTO_SUB") ?? "/usr/bin/mosquitto_sub";

    /// <summary>coreutils' stdbuf, to line-buffer mosquitto_sub's stdout.</summary>
    public static string Stdbuf => Environment.GetEnvironmentVariable("SAITO_TEST_STDBUF") ?? "/usr/bin/stdbuf";

    /// <summary><c>tests/clients</c>: the paho and MQTT.js scripts and MQTT.js's node_modules.</summary>
    public static string ClientsDirectory => Environment.GetEnvironmentVariable("SAITO_TEST_CLIENTS_DIR") ?? s_clientsDirectory.Value;

    public static string PahoScript => Path.Combine(ClientsDirectory, "paho_client.py");

    public static string MqttJsScript => Path.Combine(ClientsDirectory, "mqttjs_client.js");

    /// <summary>Fails with a message that says how to fix the machine when a client is missing.</summary>
    internal static void EnsureExists(string path, string what)
    {
        if (Path.IsPathRooted(path) && !File.Exists(path))
        {
            throw new ExternalClientException(
                $"{what} is missing at {path}. Run scripts/test.sh (it installs mosquitto-clients and python3-paho-mqtt with apt-get "
                + "and runs npm ci in tests/clients), or point the SAITO_TEST_* variable at it.");
        }
    }

    internal static void EnsureMqttJsInstalled()
    {
        EnsureExists(MqttJsScript, "The MQTT.js test client");
        if (!Directory.Exists(Path.Combine(ClientsDirectory, "node_modules", "mqtt")))
        {
            throw new ExternalClientException(
                $"MQTT.js is not installed in {ClientsDirectory}: run `npm ci` there (scripts/test.sh does).");
        }
    }

    private static readonly Lazy<string> s_clientsDirectory = new(FindClientsDirectory);

    private static string FindClientsDirectory()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            string candidate = Path.Combine(dir.FullName, "tests", "clients");
            if (File.Exists(Path.Combine(candidate, "paho_client.py")))
            {
                return candidate;
            }
        }

        throw new ExternalClientException(
            $"Could not find tests/clients above {AppContext.BaseDirectory}; set SAITO_TEST_CLIENTS_DIR.");
    }
}
