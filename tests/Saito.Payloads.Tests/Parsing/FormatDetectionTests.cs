using System.Text;
using static Saito.Payloads.ReadingParser;

namespace Saito.Payloads.Tests.Parsing;

public sealed class FormatDetectionTests
{
    [Theory]
    [InlineData("application/senml+json", """{"ts":1}""", true)]
    [InlineData("Application/SenML+JSON; charset=utf-8", """{"ts":1}""", true)]
    [InlineData("application/json", """[{"n":"hr","v":72}]""", false)]
    [InlineData(" application/json ;charset=utf-8", """[{"n":"hr","v":72}]""", false)]
    public void A_content_type_naming_a_format_decides(string contentType, string payload, bool senml)
    {
        DetectFormat(contentType, Encoding.UTF8.GetBytes(payload)).ShouldBe(senml ? PayloadFormat.SenML : PayloadFormat.SaitoJson);
    }

    [Theory]
    [InlineData(null, """[{"n":"hr","v":72}]""", true)]
    [InlineData(null, """  [ {"bn":"wrist-17/"}, {"n":"hr","v":72}]""", true)]
    [InlineData(null, """[{"battery":1,"meta":{"ts":1},"bver":10}]""", true)]
    [InlineData("text/plain", """[{"v":72}]""", true)]
    [InlineData("application/senml+cbor", """[{"t":0,"v":72}]""", true)]
    [InlineData(null, """[{"ts":"2025-10-06T09:00:00Z","n":"hr","v":72}]""", false)]
    [InlineData(null, """[{"v":72,"ts":1}]""", false)]
    [InlineData(null, """[{"hr":72}]""", false)]
    [InlineData(null, """{"n":"hr","v":72}""", false)]
    [InlineData(null, """[]""", false)]
    [InlineData(null, """[42,{"n":"hr"}]""", false)]
    [InlineData(null, """[{"n":"hr","v":""", false)]
    [InlineData(null, """not json""", false)]
    public void Without_a_content_type_an_array_whose_first_element_has_a_senml_label_and_no_ts_is_senml(
        string? contentType, string payload, bool senml)
    {
        DetectFormat(contentType, Encoding.UTF8.GetBytes(payload)).ShouldBe(senml ? PayloadFormat.SenML : PayloadFormat.SaitoJson);
    }
}
