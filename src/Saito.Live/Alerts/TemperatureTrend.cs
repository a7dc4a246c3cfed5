namespace Saito.Live.Alerts;

/// <summary>
/// The least-squares slope of skin temperature over a sliding window, from running sums over a ring buffer:
/// O(1) amortised per sample. Times are seconds from an origin that is moved up (and the sums recomputed)
/// once it falls two windows behind, so the sums stay small and exact enough.
/// </summary>
internal sealed class TemperatureTrend
{
    private long[] _ticks = new long[64];
    private double[] _values = new double[64];
    private int _head;
    private int _count;
    private long _origin;
    private double _st, _sv, _stt, _stv;

    public void Reset()
    {
        _head = 0;
        _count = 0;
        _st = _sv = _stt = _stv = 0;
    }

    /// <summary>Adds a sample (timestamps increasing) and drops those the window no longer needs: it keeps one sample at or before t − window.</summary>
    public void Add(DateTime t, double value, TimeSpan window)
    {
        if (_count == 0)
        {
            _origin = t.Ticks;
        }
        else if (t.Ticks - _origin > 2 * window.Ticks)
        {
            _origin = _ticks[_head];
            Recompute();
        }
        if (_count == _ticks.Length)
        {
            Grow();
        }
        var at = (_head + _count) % _ticks.Length;
        _ticks[at] = t.Ticks;
        _values[at] = value;
        _count++;
        Include(t.Ticks, value, 1);
        var cutoff = t.Ticks - window.Ticks;
        while (_count >= 2 && _ticks[(_head + 1) % _ticks.Length] <= cutoff)
        {
            Include(_ticks[_head], _values[_head], -1);
            _head = (_head + 1) % _ticks.Length;
            _count--;
        }
    }

    /// <summary>The slope in °C per minute, once the samples cover the whole window (at least three of them).</summary>
    public bool TrySlopePerMinute(DateTime now, TimeSpan window, out double slope)
    {
        slope = 0;
        if (_count < 3 || now.Ticks - _ticks[_head] < window.Ticks)
        {
            return false;
        }
        var denominator = (_count * _stt) - (_st * _st);
        if (denominator <= 0)
        {
            return false;
        }
        slope = ((_count * _stv) - (_st * _sv)) / denominator * 60;
        return true;
    }

    private void Include(long ticks, double value, int sign)
    {
        var x = (ticks - _origin) / (double)TimeSpan.TicksPerSecond;
        _st += sign * x;
        _sv += sign * value;
        _stt += sign * x * x;
        _stv += sign * x * value;
    }

    private void Recompute()
    {
        _st = _sv = _stt = _stv = 0;
        for (var i = 0; i < _count; i++)
        {
            var at = (_head + i) % _ticks.Length;
            Include(_ticks[at], _values[at], 1);
        }
    }

    private void Grow()
    {
        var ticks = new long[_ticks.Length * 2];
        var values = new double[_ticks.Length * 2];
        for (var i = 0; i < _count; i++)
        {
            var at = (_head + i) % _ticks.Length;
            ticks[i] = _ticks[at];
            values[i] = _values[at];
        }
        _ticks = ticks;
        _values = values;
        _head = 0;
    }
}
