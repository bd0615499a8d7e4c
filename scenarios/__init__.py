"""Built-in scenarios, one file each; importing this package registers them."""

from .trust_population import TrustPopulation, TrustPopulationParams

__all__ = ["TrustPopulation", "TrustPopulationParams"]
