namespace Saito.Registry.Model;

/// <summary>
/// A row staff edit: <see cref="Version"/> is its concurrency token (the API's ETag). Every update adds one; an
/// update made against an older version fails instead of overwriting someone else's change.
/// </summary>
public interface IVersioned
{
    int Version { get; set; }
}
