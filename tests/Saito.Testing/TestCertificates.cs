using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Saito.Testing;

/// <summary>
/// A throwaway CA and a server certificate for localhost / 127.0.0.1, written as PEM files,
/// made once per test run. Both brokers under test use them for their TLS listeners.
/// </summary>
public sealed class TestCertificates
{
    private static readonly Lazy<TestCertificates> s_instance = new(Create);

    private TestCertificates(string directory) => Directory = directory;

    public static TestCertificates Instance => s_instance.Value;

    public string Directory { get; }
    public string CaCertificatePath => Path.Combine(Directory, "ca.crt");
    public string ServerCertificatePath => Path.Combine(Directory, "server.crt");
    public string ServerKeyPath => Path.Combine(Directory, "server.key");

    /// <summary>The server certificate with its private key, for Kestrel.</summary>
    public X509Certificate2 LoadServerCertificate() =>
        X509Certificate2.CreateFromPemFile(ServerCertificatePath, ServerKeyPath);

    private static TestCertificates Create()
    {
        string dir = Path.Combine(Path.GetTempPath(), "saito-test-certs-" + Environment.ProcessId);
        System.IO.Directory.CreateDirectory(dir);
        var certs = new TestCertificates(dir);

        using var caKey = RSA.Create(2048);
        var caRequest = new CertificateRequest("CN=Saito Test CA", caKey, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        caRequest.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
        caRequest.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, true));
        caRequest.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(caRequest.PublicKey, false));
        var now = DateTimeOffset.UtcNow;
        using var ca = caRequest.CreateSelfSigned(now.AddDays(-1), now.AddYears(1));

        using var serverKey = RSA.Create(2048);
        var serverRequest = new CertificateRequest("CN=localhost", serverKey, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        var san = new SubjectAlternativeNameBuilder();
        san.AddDnsName("localhost");
        san.AddIpAddress(IPAddress.Loopback);
        serverRequest.CertificateExtensions.Add(san.Build());
        serverRequest.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, false));
        serverRequest.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature | X509KeyUsageFlags.KeyEncipherment, true));
        serverRequest.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1")], false));
        serverRequest.CertificateExtensions.Add(X509AuthorityKeyIdentifierExtension.CreateFromCertificate(ca, true, false));
        using var server = serverRequest.Create(ca, now.AddDays(-1), now.AddYears(1), RandomNumberGenerator.GetBytes(16));

        File.WriteAllText(certs.CaCertificatePath, ca.ExportCertificatePem());
        File.WriteAllText(certs.ServerCertificatePath, server.ExportCertificatePem());
        File.WriteAllText(certs.ServerKeyPath, serverKey.ExportPkcs8PrivateKeyPem());
        return certs;
    }
}
