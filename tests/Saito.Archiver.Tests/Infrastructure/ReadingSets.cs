using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using Saito.Readings;

namespace Saito.Archiver.Tests.Infrastructure;

/// <summary>Readings compared as sets: a canonical order, and a SHA-256 over every field of every reading.</summary>
public static class ReadingSets
{
    public static List<Reading> Canonical(IEnumerable<Reading> readings) =>
        readings.OrderBy(r => r.Kind).ThenBy(r => r.DeviceId).ThenBy(r => r.Channel).ThenBy(r => r.Timestamp).ToList();

    public static string Checksum(IEnumerable<Reading> readings)
    {
        var text = new StringBuilder();
        foreach (var r in Canonical(readings))
        {
            text.Append(CultureInfo.InvariantCulture,
                $"{r.Kind}|{r.DeviceId}|{r.Channel}|{r.Timestamp.Ticks}|{r.V0:R}|{r.V1:R}|{r.V2:R}|{r.V3:R}|{r.ReceivedAt.Ticks}\n");
        }

        return Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(text.ToString())));
    }
}
