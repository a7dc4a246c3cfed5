using Saito.Live.Analytics;

namespace Saito.Live.Tests.Analytics;

public sealed class OptionsTests
{
    [Fact]
    public void The_defaults_are_valid_and_as_documented()
    {
        var sway = new SwayOptions();
        sway.Validate().ShouldBeEmpty();
        (sway.SettlingSeconds, sway.WindowSeconds, sway.HeightChangeMetres, sway.HeightChangeSeconds, sway.MaxGapSeconds, sway.MaxSamplesPerWindow)
            .ShouldBe((20.0, 10.0, 0.25, 2.0, 5.0, 4096));
        SwayOptions.SectionName.ShouldBe("Dashboard:Sway");

        var mat = new MatOptions();
        mat.Validate().ShouldBeEmpty();
        (mat.Columns, mat.Cells, mat.CellMetres, mat.OccupiedKpa, mat.WindowSeconds, mat.MaxCellAgeSeconds, mat.MaxGapSeconds, mat.MaxFramesPerWindow)
            .ShouldBe((4, 16, 0.1, 2.0, 10.0, 2.0, 5.0, 4096));
        MatOptions.SectionName.ShouldBe("Dashboard:Mat");
    }

    [Theory]
    [InlineData(nameof(SwayOptions.SettlingSeconds), 0.5, "Dashboard:Sway:SettlingSeconds must be between 1 and 600 (was 0.5).")]
    [InlineData(nameof(SwayOptions.WindowSeconds), 601, "Dashboard:Sway:WindowSeconds must be between 1 and 600 (was 601).")]
    [InlineData(nameof(SwayOptions.WindowSeconds), double.NaN, "Dashboard:Sway:WindowSeconds must be between 1 and 600 (was NaN).")]
    [InlineData(nameof(SwayOptions.HeightChangeMetres), 0.01, "Dashboard:Sway:HeightChangeMetres must be between 0.05 and 2 (was 0.01).")]
    [InlineData(nameof(SwayOptions.HeightChangeSeconds), 0, "Dashboard:Sway:HeightChangeSeconds must be between 0.1 and 60 (was 0).")]
    [InlineData(nameof(SwayOptions.MaxGapSeconds), -1, "Dashboard:Sway:MaxGapSeconds must be between 0.1 and 3600 (was -1).")]
    [InlineData(nameof(SwayOptions.MaxSamplesPerWindow), 8, "Dashboard:Sway:MaxSamplesPerWindow must be between 16 and 1000000 (was 8).")]
    public void A_bad_sway_setting_is_named_with_its_range(string setting, double value, string message)
    {
        Configured.ValidateWith<SwayOptions>(setting, value, o => o.Validate()).ShouldBe([message]);
    }

    [Theory]
    [InlineData(nameof(MatOptions.Columns), 0, "Dashboard:Mat:Columns must be between 1 and 256 (was 0).")]
    [InlineData(nameof(MatOptions.Cells), 70_000, "Dashboard:Mat:Cells must be between 1 and 65536 (was 70000).")]
    [InlineData(nameof(MatOptions.CellMetres), 0, "Dashboard:Mat:CellMetres must be between 0.001 and 1 (was 0).")]
    [InlineData(nameof(MatOptions.OccupiedKpa), double.PositiveInfinity, "Dashboard:Mat:OccupiedKpa must be between 0.01 and 10000 (was Infinity).")]
    [InlineData(nameof(MatOptions.WindowSeconds), 0, "Dashboard:Mat:WindowSeconds must be between 1 and 600 (was 0).")]
    [InlineData(nameof(MatOptions.MaxCellAgeSeconds), -0.1, "Dashboard:Mat:MaxCellAgeSeconds must be between 0 and 60 (was -0.1).")]
    [InlineData(nameof(MatOptions.MaxGapSeconds), 0.05, "Dashboard:Mat:MaxGapSeconds must be between 0.1 and 3600 (was 0.05).")]
    [InlineData(nameof(MatOptions.MaxFramesPerWindow), 2_000_000, "Dashboard:Mat:MaxFramesPerWindow must be between 16 and 1000000 (was 2000000).")]
    public void A_bad_mat_setting_is_named_with_its_range(string setting, double value, string message)
    {
        Configured.ValidateWith<MatOptions>(setting, value, o => o.Validate()).ShouldBe([message]);
    }
}
