"""How many runs each case gets: adaptive runs (`decider.py`) and the run's spending limit (`budget.py`)."""
