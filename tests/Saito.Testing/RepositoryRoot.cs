namespace Saito.Testing;

/// <summary>The repository's root folder (the one holding Saito.sln), found from the test binaries upward.</summary>
public static class RepositoryRoot
{
    public static string Path { get; } = Find();

    private static string Find()
    {
        for (var directory = new DirectoryInfo(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(System.IO.Path.Combine(directory.FullName, "Saito.sln")))
            {
                return directory.FullName;
            }
        }

        throw new InvalidOperationException($"No Saito.sln above {AppContext.BaseDirectory}");
    }
}
