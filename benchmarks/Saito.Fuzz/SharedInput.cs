using System.IO.MemoryMappedFiles;

namespace Saito.Fuzz;

/// <summary>
/// The input the worker is running, in a memory-mapped file its supervisor can read after the worker dies: a stack
/// overflow ends a .NET process with no handler run, and a hang can only be ended from outside. Layout: the
/// execution count (8 bytes, also the supervisor's sign of life), the input's length (4 bytes), the input.
/// </summary>
internal sealed unsafe class SharedInput : IDisposable
{
    private const int HeaderSize = 16;

    private readonly MemoryMappedFile _file;
    private readonly MemoryMappedViewAccessor _view;
    private readonly byte* _base;

    private SharedInput(string path, FileMode mode)
    {
        _file = MemoryMappedFile.CreateFromFile(path, mode, mapName: null, HeaderSize + Mutator.MaxInput);
        _view = _file.CreateViewAccessor();
        byte* pointer = null;
        _view.SafeMemoryMappedViewHandle.AcquirePointer(ref pointer);
        _base = pointer + _view.PointerOffset;
    }

    public static SharedInput Create(string path) => new(path, FileMode.Create);

    public static SharedInput Open(string path) => new(path, FileMode.Open);

    /// <summary>Executions so far, across worker restarts.</summary>
    public long Executions => Volatile.Read(ref *(long*)_base);

    /// <summary>Records the input about to run and counts it.</summary>
    public void Publish(ReadOnlySpan<byte> input)
    {
        int length = Math.Min(input.Length, Mutator.MaxInput);
        *(int*)(_base + 8) = length;
        input[..length].CopyTo(new Span<byte>(_base + HeaderSize, length));
        Volatile.Write(ref *(long*)_base, Executions + 1);
    }

    /// <summary>The last input published.</summary>
    public byte[] Current()
    {
        int length = Math.Clamp(*(int*)(_base + 8), 0, Mutator.MaxInput);
        return new ReadOnlySpan<byte>(_base + HeaderSize, length).ToArray();
    }

    public void Dispose()
    {
        _view.SafeMemoryMappedViewHandle.ReleasePointer();
        _view.Dispose();
        _file.Dispose();
    }
}
