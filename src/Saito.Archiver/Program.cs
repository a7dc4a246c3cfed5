using Saito.Archiver;

return await ArchiverCli.RunAsync(args);
