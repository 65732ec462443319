"""The bottom of the house: errors, units, the metrics schema, the run record, directory formats."""
