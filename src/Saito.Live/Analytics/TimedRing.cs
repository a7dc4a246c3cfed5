namespace Saito.Live.Analytics;

/// <summary>
/// A first-in first-out buffer of timed items, oldest first, that holds at most <c>capacity</c> items: adding to a full
/// ring drops the oldest. Its arrays start small and double up to the capacity, then are reused, so a steady stream
/// allocates nothing.
/// </summary>
internal sealed class TimedRing<T>
    where T : struct
{
    private const int InitialSize = 64;
    private readonly int capacity;
    private long[] ticks;
    private T[] items;
    private int head;

    public TimedRing(int capacity)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(capacity, 1);
        this.capacity = capacity;
        ticks = new long[Math.Min(capacity, InitialSize)];
        items = new T[ticks.Length];
    }

    public int Count { get; private set; }

    /// <summary>The ticks of the i-th item, oldest first.</summary>
    public long TicksAt(int index) => ticks[Slot(index)];

    /// <summary>The i-th item, oldest first.</summary>
    public T this[int index] => items[Slot(index)];

    public void Add(long itemTicks, T item)
    {
        if (Count == capacity)
        {
            head = (head + 1) % ticks.Length;
            Count--;
        }
        else if (Count == ticks.Length)
        {
            Grow();
        }

        var slot = Slot(Count);
        ticks[slot] = itemTicks;
        items[slot] = item;
        Count++;
    }

    /// <summary>Drops the items whose ticks are at or before <paramref name="lastDroppedTicks"/>.</summary>
    public void DropThrough(long lastDroppedTicks)
    {
        while (Count > 0 && ticks[head] <= lastDroppedTicks)
        {
            head = (head + 1) % ticks.Length;
            Count--;
        }
    }

    public void Clear()
    {
        head = 0;
        Count = 0;
    }

    private int Slot(int index) => (head + index) % ticks.Length;

    private void Grow()
    {
        var size = (int)Math.Min((long)ticks.Length * 2, capacity);
        var newTicks = new long[size];
        var newItems = new T[size];
        for (var i = 0; i < Count; i++)
        {
            newTicks[i] = ticks[Slot(i)];
            newItems[i] = items[Slot(i)];
        }

        ticks = newTicks;
        items = newItems;
        head = 0;
    }
}
