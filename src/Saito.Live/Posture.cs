namespace Saito.Live;

/// <summary>Whether a student is sitting or standing, as far as Saito can tell (the seat mat, else the head's height).</summary>
public enum Posture
{
    Unknown = 0,
    Sitting = 1,
    Standing = 2,
}
