// The registry's DbContext is what the host's endpoints, pages and glue work on: nearly every file here names it.
global using Saito.Registry.Data;
