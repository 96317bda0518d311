import pytest

from pipeline.settings import PipelineSettings
from pipeline.vocabulary import default_vocabulary

pytestmark = pytest.mark.unit


@pytest.fixture(scope="session")
def vocabulary():
    """The shipped vocabulary, loaded once."""
    return default_vocabulary()


@pytest.fixture
def settings() -> PipelineSettings:
    return PipelineSettings()
