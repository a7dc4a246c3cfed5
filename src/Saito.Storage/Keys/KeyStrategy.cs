using Saito.Readings.Configuration;

namespace Saito.Storage.Keys;

/// <summary>How reading tables are keyed (<c>Storage:KeyStrategy</c>).</summary>
[System.ComponentModel.TypeConverter(typeof(KebabCaseEnumConverter<KeyStrategy>))]
public enum KeyStrategy
{
    /// <summary>(device_id, channel, ts) is the clustered primary key: two integers plus a datetime, as the study did.</summary>
    Natural,

    /// <summary>A GUID derived from the reading (name-based, RFC 9562 version 5): scattered, like a random GUID, but the same reading always gets the same GUID.</summary>
    Guid,

    /// <summary>A GUID derived from the reading whose leading sort bytes are the timestamp, in the order the database sorts uniqueidentifier/uuid.</summary>
    SequentialGuid,
}

/// <summary>The database behind <c>Storage:Provider</c>.</summary>
[System.ComponentModel.TypeConverter(typeof(KebabCaseEnumConverter<StorageProvider>))]
public enum StorageProvider
{
    Sqlite,
    Postgres,
    SqlServer,
}
