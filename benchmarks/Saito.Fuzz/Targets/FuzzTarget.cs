namespace Saito.Fuzz.Targets;

/// <summary>
/// One thing to fuzz. <see cref="Run"/> feeds an input to Saito's code the way the server does and holds it to its
/// contract: it returns (whatever the input) or throws the one documented rejection, which <see cref="Run"/> catches.
/// Anything that escapes <see cref="Run"/> is a crash; so is a run that never ends or overflows the stack.
/// </summary>
internal abstract class FuzzTarget
{
    /// <summary>
    /// Targets by name, made on demand: under afl-fuzz no Saito code (instrumented) may run before SharpFuzz has
    /// set up its shared memory, so a target is created inside the fuzzing action, not at start.
    /// </summary>
    private static readonly (string Name, Func<FuzzTarget> Create)[] Catalogue =
    [
        ("mqtt-packet", () => new MqttPacketTarget()),
        ("saito-json", PayloadTarget.SaitoJson),
        ("senml", PayloadTarget.SenML),
    ];

    public static IEnumerable<string> Names => Catalogue.Select(c => c.Name);

    /// <summary>The name on the command line: <c>mqtt-packet</c>, <c>saito-json</c>, <c>senml</c>.</summary>
    public abstract string Name { get; }

    public abstract string Description { get; }

    /// <summary>Valid inputs the mutator starts from (and afl-fuzz's <c>-i</c> folder).</summary>
    public abstract IReadOnlyList<byte[]> Seeds();

    /// <summary>Fragments the mutator splices in: field names, numbers, property identifiers, bad UTF-8.</summary>
    public abstract IReadOnlyList<byte[]> Tokens { get; }

    /// <summary>An input malformed on purpose, built whole: deep nesting, lying lengths, huge numbers, many levels.</summary>
    public abstract byte[] Malformed(Random random);

    /// <summary>
    /// Runs one input. Returns a short description of what happened (which packets, which rejections, which
    /// dead-letter reasons) with the numbers left out; the fuzzer keeps inputs whose description it has not seen.
    /// Throws only when the contract is broken (<see cref="ContractViolationException"/> for a wrong result).
    /// </summary>
    public abstract string Run(ReadOnlySpan<byte> input);

    /// <summary>A new instance of the target of that name (see <see cref="Names"/>).</summary>
    public static FuzzTarget Create(string name) => Catalogue.First(c => c.Name == name).Create();

    /// <summary>
    /// A message with what varies from input to input taken out (digits, hex after 0x, quoted text), so that
    /// "Property 0x26 ..." and "Property 0x0B ..." read the same.
    /// </summary>
    protected static string Shape(string message)
    {
        var shape = new System.Text.StringBuilder(message.Length);
        bool quoted = false;
        for (int i = 0; i < message.Length; i++)
        {
            char c = message[i];
            if (c == '\'')
            {
                quoted = !quoted;
            }
            else if (!quoted)
            {
                bool hex = i > 0 && char.IsAsciiHexDigit(c) && shape.Length > 0 && shape[^1] == '#';
                shape.Append(char.IsAsciiDigit(c) || hex ? '#' : c);
            }
        }

        return shape.ToString();
    }
}

/// <summary>The code under test returned, but what it returned breaks its own documented promise.</summary>
internal sealed class ContractViolationException : Exception
{
    public ContractViolationException(string message)
        : base(message)
    {
    }

    public ContractViolationException()
    {
    }

    public ContractViolationException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
