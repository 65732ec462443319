"""The machine: commands, child processes, cgroups, the lab and its ledger, doctor, witness."""
