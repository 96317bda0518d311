"""Names shared by the planner's modules."""

from typing import Literal

Kind = Literal["encoder", "cross_encoder", "image_encoder"]
INGRESS_NAME = "SearchIngress"
IMPORT_PATH = "deployments.app:build_app"
