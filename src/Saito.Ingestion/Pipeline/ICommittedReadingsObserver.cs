using Saito.Readings;

namespace Saito.Ingestion.Pipeline;

/// <summary>
/// Told about each batch the moment it is committed, before its messages are acknowledged: how the live
/// dashboard and its alert engine see readings without polling the database. Runs on the writer's thread, so it
/// must be quick and must not block (copy what is needed and hand it on); the batch is reused once it returns.
/// An exception is logged and otherwise ignored: the readings are stored whatever an observer does.
/// </summary>
public interface ICommittedReadingsObserver
{
    void OnCommitted(ReadingBatch batch);
}
