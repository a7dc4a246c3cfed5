using Saito.Readings;

namespace Saito.Payloads;

/// <summary>Up to four values of one reading, with a bit per slot that is set.</summary>
internal struct ValueSet
{
    public double V0;
    public double V1;
    public double V2;
    public double V3;
    public byte Mask;

    public readonly bool Has(int slot) => (Mask & (1 << slot)) != 0;

    public void Set(int slot, double value)
    {
        switch (slot)
        {
            case 0:
                V0 = value;
                break;
            case 1:
                V1 = value;
                break;
            case 2:
                V2 = value;
                break;
            default:
                V3 = value;
                break;
        }

        Mask |= (byte)(1 << slot);
    }

    public void Clear(int slot) => Mask &= (byte)~(1 << slot);

    public readonly double Get(int slot) => slot switch
    {
        0 => V0,
        1 => V1,
        2 => V2,
        _ => V3,
    };

    public readonly Reading ToReading(ReadingKind kind, int deviceId, int channel, long ticks, DateTime receivedAt) =>
        new(kind, deviceId, channel, new DateTime(ticks, DateTimeKind.Utc), receivedAt,
            Has(0) ? V0 : null, Has(1) ? V1 : null, Has(2) ? V2 : null, Has(3) ? V3 : null);

    /// <summary>For a biosensor reading: a diastolic pressure must be below the systolic.</summary>
    public readonly bool DiastolicNotBelowSystolic => Has(1) && Has(2) && V2 >= V1;
}
