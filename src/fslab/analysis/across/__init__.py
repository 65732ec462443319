"""One campaign against another (`fslab compare`), decided by the rule of the verdicts."""
