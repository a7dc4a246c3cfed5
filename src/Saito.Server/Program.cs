using Saito.Server;

SaitoApp.Build(args).Run();
