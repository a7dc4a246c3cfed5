namespace Saito.Testing;

/// <summary>Throwaway folders of a test's own server.</summary>
public static class TestFolders
{
    /// <summary>
    /// Deletes <paramref name="path"/> and everything in it, trying again until <paramref name="within"/> has passed
    /// while something still writes there. A server whose start failed (a taken port) has services that started before
    /// the failure, and they finish preparing their files (SQLite databases, the registry's migrations) after it: a
    /// single delete could race them and fail with "Directory not empty".
    /// </summary>
    public static async Task DeleteAsync(string path, TimeSpan? within = null)
    {
        var deadline = DateTime.UtcNow + (within ?? TimeSpan.FromSeconds(30));
        while (true)
        {
            try
            {
                if (Directory.Exists(path))
                {
                    Directory.Delete(path, recursive: true);
                }

                return;
            }
            catch (IOException) when (DateTime.UtcNow < deadline)
            {
                await Task.Delay(100);
            }
        }
    }
}
