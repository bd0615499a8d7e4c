"""The simulation core: the Mesa model, agents, environments, the scenario contract and its
registry, and named stages of long steps."""
