"""The shared query-vector cache (``EmbeddingService.query_vector``): an encoder call
cancelled from outside (Ray Serve cancels a departed client's child calls) must not
leave a cancelled task behind for the next request of the same text."""

import asyncio

import numpy as np
import pytest

from pipeline.embeddings import EmbeddingService
from pipeline.settings import PipelineSettings
from tests.support.fakes import HashingTextEncoder

pytestmark = pytest.mark.unit


class CancelledOnce(HashingTextEncoder):
    """The first call is cancelled from outside (a fault at the edge), then it answers."""

    def __init__(self) -> None:
        super().__init__()
        self.cancelled = False

    async def encode(self, texts, titles=None):
        if not self.cancelled:
            self.cancelled = True
            raise asyncio.CancelledError
        return self.encode_sync(texts)


async def test_a_cancelled_call_is_encoded_again_for_the_next_request():
    encoder = CancelledOnce()
    embeddings = EmbeddingService({"pubmedbert": encoder}, PipelineSettings())
    with pytest.raises(asyncio.CancelledError):
        await embeddings.query_vector("pubmedbert", "osimertinib")
    vector = await embeddings.query_vector("pubmedbert", "osimertinib")
    np.testing.assert_allclose(vector, encoder.encode_sync(["osimertinib"])[0])
