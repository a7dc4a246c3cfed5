using System.Globalization;
using System.Security.Cryptography;
using System.Text;

namespace Saito.Server.Security;

/// <summary>
/// Secrets as the credentials file keeps them: PBKDF2-HMAC-SHA256 with a random 16-byte salt per secret,
/// written <c>pbkdf2-sha256${iterations}${salt}${hash}</c> (base64). The secret itself is never stored.
/// </summary>
public static class SecretHash
{
    private const string Scheme = "pbkdf2-sha256";
    private const int SaltBytes = 16;
    private const int HashBytes = 32;

    /// <summary>The length of <see cref="NewSecret"/>'s secrets: 32 random bytes, base64url without padding.</summary>
    public const int SecretLength = 43;

    /// <summary>A new secret for a hub: 32 random bytes as URL-safe base64 (43 characters), printed once.</summary>
    public static string NewSecret() =>
        Convert.ToBase64String(RandomNumberGenerator.GetBytes(32)).TrimEnd('=').Replace('+', '-').Replace('/', '_');

    public static string Hash(string secret, int iterations)
    {
        ArgumentNullException.ThrowIfNull(secret);
        byte[] salt = RandomNumberGenerator.GetBytes(SaltBytes);
        byte[] hash = Rfc2898DeriveBytes.Pbkdf2(Encoding.UTF8.GetBytes(secret), salt, iterations, HashAlgorithmName.SHA256, HashBytes);
        return string.Create(CultureInfo.InvariantCulture, $"{Scheme}${iterations}${Convert.ToBase64String(salt)}${Convert.ToBase64String(hash)}");
    }

    /// <summary>True when <paramref name="secret"/> is the one <paramref name="stored"/> was made from. A malformed hash never verifies.</summary>
    public static bool Verify(ReadOnlySpan<byte> secret, string stored)
    {
        ArgumentNullException.ThrowIfNull(stored);
        var parts = stored.Split('$');
        if (parts.Length != 4 || parts[0] != Scheme ||
            !int.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out int iterations) || iterations < 1)
        {
            return false;
        }

        try
        {
            byte[] salt = Convert.FromBase64String(parts[2]);
            byte[] expected = Convert.FromBase64String(parts[3]);
            byte[] actual = Rfc2898DeriveBytes.Pbkdf2(secret, salt, iterations, HashAlgorithmName.SHA256, expected.Length);
            return CryptographicOperations.FixedTimeEquals(actual, expected);
        }
        catch (FormatException)
        {
            return false;
        }
    }
}
