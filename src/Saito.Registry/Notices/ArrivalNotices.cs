using Saito.Registry.CheckIns;
using Saito.Registry.Data;
using Saito.Registry.Model;

namespace Saito.Registry.Notices;

/// <summary>
/// Queues the arrival emails in the check-in's own transaction (so an arrival is never recorded without its notices,
/// nor notices without the arrival), and wakes the sender once it commits.
/// </summary>
public sealed class ArrivalNotices(GuardianNotices notices, NoticeSignal signal, TimeProvider time) : ICheckInObserver
{
    public async Task OnArrivedAsync(RegistryDbContext db, CheckIn checkIn, Owner owner, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(owner);
        if (owner.Kind == OwnerKind.Student)
        {
            await notices.QueueArrivalAsync(db, checkIn, owner, time.GetUtcNow(), cancellationToken);
        }
    }

    public void OnCommitted() => signal.Notify();
}
