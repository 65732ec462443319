"""The `fslab` command: parse arguments, call the library, print."""
