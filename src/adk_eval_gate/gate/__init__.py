"""Stage: decide. The gate turns a comparison into a verdict and an exit code."""
