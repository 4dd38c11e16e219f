"""frontier-lab backend: problems -> merge -> rollout -> sandbox -> store -> analysis."""
