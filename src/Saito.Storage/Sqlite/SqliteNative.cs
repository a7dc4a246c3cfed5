using System.Runtime.InteropServices;
using SQLitePCL;

namespace Saito.Storage.Sqlite;

/// <summary>
/// The few <c>sqlite3_*</c> calls the writer makes for every row, called straight into the e_sqlite3 library that
/// Microsoft.Data.Sqlite loaded, on pointers held for a statement's life. SQLitePCLRaw's own calls take a
/// <see cref="SafeHandle"/> each, so every bind, step and reset adds a reference and releases it again (two interlocked
/// operations) and switches the thread out of and back into the runtime's cooperative mode: about ten calls a row, 5 %
/// of the writer thread in a profile of 320 sensors (benchmarks/results/HISTORY.md).
/// <para>
/// The binds and <c>sqlite3_changes</c> are short, never block (the writer connection is used by one thread at a time)
/// and never call back into .NET, so they skip the GC transition (<see cref="SuppressGCTransitionAttribute"/>);
/// <c>sqlite3_step</c> does the work and the I/O, and <c>sqlite3_reset</c> may end a failed statement's work, so they
/// keep it.
/// </para>
/// </summary>
internal static unsafe class SqliteNative
{
    private static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<IntPtr, int, long, int> s_bindInt64;
    private static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<IntPtr, int, double, int> s_bindDouble;
    private static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<IntPtr, int, int> s_bindNull;
    private static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<IntPtr, int, byte*, int, IntPtr, int> s_bindBlob;
    private static readonly delegate* unmanaged[Cdecl]<IntPtr, int> s_reset;
    private static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<IntPtr, int> s_changes;
    private static readonly delegate* unmanaged[Cdecl]<IntPtr, int> s_step;

    /// <summary>SQLITE_TRANSIENT: SQLite copies the bound bytes before the call returns.</summary>
    private static readonly IntPtr Transient = new(-1);

    static SqliteNative()
    {
        // The library SQLitePCLRaw's provider was set up with (Microsoft.Data.Sqlite's bundle: e_sqlite3), loaded the way
        // its own DllImport loads it, so the handle is the same loaded library and the pointers are its own.
        string name = raw.GetNativeLibraryName();
        if (name != "e_sqlite3")
        {
            throw new InvalidOperationException(
                $"Saito's SQLite writer calls e_sqlite3 directly, but SQLitePCLRaw was set up with '{name}'.");
        }

        var library = NativeLibrary.Load(name, typeof(raw).Assembly, null);
        s_bindInt64 = (delegate* unmanaged[Cdecl, SuppressGCTransition]<IntPtr, int, long, int>)NativeLibrary.GetExport(library, "sqlite3_bind_int64");
        s_bindDouble = (delegate* unmanaged[Cdecl, SuppressGCTransition]<IntPtr, int, double, int>)NativeLibrary.GetExport(library, "sqlite3_bind_double");
        s_bindNull = (delegate* unmanaged[Cdecl, SuppressGCTransition]<IntPtr, int, int>)NativeLibrary.GetExport(library, "sqlite3_bind_null");
        s_bindBlob = (delegate* unmanaged[Cdecl, SuppressGCTransition]<IntPtr, int, byte*, int, IntPtr, int>)NativeLibrary.GetExport(library, "sqlite3_bind_blob");
        s_reset = (delegate* unmanaged[Cdecl]<IntPtr, int>)NativeLibrary.GetExport(library, "sqlite3_reset");
        s_changes = (delegate* unmanaged[Cdecl, SuppressGCTransition]<IntPtr, int>)NativeLibrary.GetExport(library, "sqlite3_changes");
        s_step = (delegate* unmanaged[Cdecl]<IntPtr, int>)NativeLibrary.GetExport(library, "sqlite3_step");

        var libversion = (delegate* unmanaged[Cdecl]<int>)NativeLibrary.GetExport(library, "sqlite3_libversion_number");
        if (libversion() != raw.sqlite3_libversion_number())
        {
            throw new InvalidOperationException("Saito's SQLite writer loaded another e_sqlite3 than SQLitePCLRaw's.");
        }
    }

    public static int BindInt64(IntPtr statement, int index, long value) => s_bindInt64(statement, index, value);

    public static int BindDouble(IntPtr statement, int index, double value) => s_bindDouble(statement, index, value);

    public static int BindNull(IntPtr statement, int index) => s_bindNull(statement, index);

    public static int BindBlob(IntPtr statement, int index, ReadOnlySpan<byte> value)
    {
        fixed (byte* bytes = value)
        {
            return s_bindBlob(statement, index, bytes, value.Length, Transient);
        }
    }

    public static int Step(IntPtr statement) => s_step(statement);

    public static int Reset(IntPtr statement) => s_reset(statement);

    public static int Changes(IntPtr db) => s_changes(db);

    /// <summary>
    /// A handle's pointer for as long as the lease is held: the handle cannot be released under it (a statement
    /// finalized, a connection closed) until <see cref="Dispose"/>.
    /// </summary>
    public sealed class Lease : IDisposable
    {
        private readonly SafeHandle _handle;
        private bool _held;

        public Lease(SafeHandle handle)
        {
            _handle = handle;
            handle.DangerousAddRef(ref _held);
            Pointer = handle.DangerousGetHandle();
        }

        public IntPtr Pointer { get; }

        public void Dispose()
        {
            if (_held)
            {
                _held = false;
                _handle.DangerousRelease();
            }
        }
    }
}
