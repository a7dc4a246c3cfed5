using System.Text;

namespace Saito.Storage.SqlServer;

/// <summary>
/// Quoting for the few things that go into SQL Server DDL as text: identifiers (bracket-quoted, after
/// validation) and file paths (N'...' literals). DDL takes no parameters for names or for
/// <c>FILENAME</c>, so these are the only way in; nothing else is ever concatenated into SQL.
/// </summary>
internal static class SqlServerSql
{
    /// <summary>The schema every Saito table lives in.</summary>
    public const string Schema = "dbo";

    /// <summary>The filegroup a tier uses when none is configured.</summary>
    public const string DefaultFilegroup = "PRIMARY";

    /// <summary><c>[name]</c>, with any <c>]</c> doubled (as QUOTENAME does). Callers validate names first; this is the second line.</summary>
    public static string Quote(string identifier)
    {
        ArgumentException.ThrowIfNullOrEmpty(identifier);
        return "[" + identifier.Replace("]", "]]", StringComparison.Ordinal) + "]";
    }

    /// <summary><c>[dbo].[table]</c>.</summary>
    public static string Table(string table) => Quote(Schema) + "." + Quote(table);

    /// <summary>A Unicode string literal, <c>N'...'</c>, with single quotes doubled.</summary>
    public static string Literal(string value)
    {
        ArgumentNullException.ThrowIfNull(value);
        var text = new StringBuilder(value.Length + 3);
        text.Append("N'");
        foreach (char c in value)
        {
            if (c == '\'')
            {
                text.Append('\'');
            }

            text.Append(c);
        }

        return text.Append('\'').ToString();
    }

    /// <summary>
    /// A filegroup name from configuration, checked the way <see cref="StorageOptionsValidator"/> checks it
    /// (the store is also made without the options pipeline, by tools and tests).
    /// </summary>
    public static string? ValidFilegroup(string? name, string key)
    {
        if (string.IsNullOrEmpty(name))
        {
            return null;
        }

        if (!StorageOptionsValidator.IsPlainIdentifier(name))
        {
            throw new ArgumentException($"{key} must be a plain identifier (letters, digits, underscore; starting with a letter), was '{name}'.", key);
        }

        return name;
    }

    /// <summary>
    /// A folder on the database server from configuration: any characters a path may hold (quotes included:
    /// <see cref="Literal"/> escapes them), but no control characters, which no sane path holds and which
    /// would make the generated DDL unreadable.
    /// </summary>
    public static string? ValidFolder(string? path, string key)
    {
        if (string.IsNullOrWhiteSpace(path))
        {
            return null;
        }

        if (path.Any(char.IsControl))
        {
            throw new ArgumentException($"{key} must not contain control characters.", key);
        }

        if (path.Length > 200)
        {
            // sys.database_files.physical_name is nvarchar(260); leave room for "<db>_<filegroup>.ndf".
            throw new ArgumentException($"{key} is {path.Length} characters; at most 200 leave room for the file name.", key);
        }

        return path;
    }

    /// <summary>
    /// <c>folder/name</c> with the folder's own separator: a server folder given with backslashes
    /// (<c>D:\data</c>) is a Windows server, otherwise forward slashes (SQL Server on Linux).
    /// </summary>
    public static string JoinPath(string folder, string fileName)
    {
        bool windows = folder.Contains('\\', StringComparison.Ordinal) && !folder.Contains('/', StringComparison.Ordinal);
        char separator = windows ? '\\' : '/';
        string trimmed = folder.TrimEnd('/', '\\');
        if (trimmed.Length == 0)
        {
            // The root itself ("/").
            return separator + fileName;
        }

        return trimmed + separator + fileName;
    }
}
