"""The grade table: what the gradebook and the trusted re-check recorded, per student."""
