namespace Saito.Storage.Tests.Paths;

public sealed class DataPathsTests
{
    private static Func<string, string?> Env(params (string Name, string Value)[] variables) =>
        name => variables.FirstOrDefault(v => v.Name == name).Value;

    [Fact]
    public void A_configured_folder_wins_and_a_relative_one_is_taken_from_the_current_folder()
    {
        var env = Env(("STATE_DIRECTORY", "/var/lib/saito"), ("HOME", "/home/ana"));
        DataPaths.Resolve("/srv/saito", env).ShouldBe("/srv/saito");
        DataPaths.Resolve("here", env).ShouldBe(Path.Combine(Environment.CurrentDirectory, "here"));
    }

    [Fact]
    public void Under_systemd_it_is_the_state_directory_the_first_of_several()
    {
        DataPaths.Resolve(null, Env(("STATE_DIRECTORY", "/var/lib/saito"), ("HOME", "/home/ana"))).ShouldBe("/var/lib/saito");
        DataPaths.Resolve(" ", Env(("STATE_DIRECTORY", "/var/lib/saito:/var/lib/other"))).ShouldBe("/var/lib/saito");
    }

    [Fact]
    public void Otherwise_it_is_saito_in_the_users_data_folder()
    {
        DataPaths.Resolve(null, Env(("XDG_DATA_HOME", "/data/ana"), ("HOME", "/home/ana"))).ShouldBe("/data/ana/saito");
        DataPaths.Resolve(null, Env(("HOME", "/home/ana"))).ShouldBe("/home/ana/.local/share/saito");
        DataPaths.Resolve(null, Env(("XDG_DATA_HOME", "relative/is/ignored"), ("HOME", "/home/ana"))).ShouldBe("/home/ana/.local/share/saito");
    }

    [Fact]
    public void The_storage_defaults_are_hot_and_archive_in_it()
    {
        DataPaths.StorageDefaults("/var/lib/saito").ShouldBe(
        [
            new("Storage:HotPath", "/var/lib/saito/hot"),
            new("Storage:ArchivePath", "/var/lib/saito/archive"),
        ]);
    }

    [Fact]
    public void A_database_left_where_earlier_versions_kept_it_is_found_only_when_the_new_place_is_empty()
    {
        var folder = Directory.CreateTempSubdirectory("saito-paths-");
        try
        {
            string newHot = Path.Combine(folder.FullName, "state", "hot");
            DataPaths.EarlierHotDatabase(newHot, folder.FullName).ShouldBeNull("nothing anywhere");

            string earlier = Path.Combine(folder.FullName, "data", "hot", "saito-hot.db");
            Directory.CreateDirectory(Path.GetDirectoryName(earlier)!);
            File.WriteAllText(earlier, "");
            DataPaths.EarlierHotDatabase(newHot, folder.FullName).ShouldBe(earlier);

            Directory.CreateDirectory(newHot);
            File.WriteAllText(Path.Combine(newHot, "saito-hot.db"), "");
            DataPaths.EarlierHotDatabase(newHot, folder.FullName).ShouldBeNull("the new place has its own database");
            DataPaths.EarlierHotDatabase(Path.Combine(folder.FullName, "data", "hot"), folder.FullName).ShouldBeNull("the same file");
        }
        finally
        {
            folder.Delete(recursive: true);
        }
    }
}
