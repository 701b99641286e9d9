# (filled in by the fleet work)
