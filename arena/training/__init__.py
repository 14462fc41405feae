"""Training curves: the metrics `arena train` records as it goes, and the figure `arena plot training` draws."""
