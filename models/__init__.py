"""Model loading and batched inference (DESIGN.md layer ``models/``): torch, transformers,
ONNX Runtime, open_clip, timm; never ray, pipeline or a database.

- ``specs``: ``EncoderSpec`` per role, ``ModelProfile`` (the YAML ``models:`` section).
- ``loader``: ``load_encoder``, ``load_cross_encoder``, ``load_role``.
- families: ``text`` (hf-text), ``cross_encoder``, ``bi_encoder_scorer``, ``smiles``
  (smiles-bert), ``molformer``, ``open_clip_encoder``, ``timm_encoder``.
- shared: ``batching``, ``tokens``, ``runtime``, ``onnx_runtime``, ``sources``, ``inputs``,
  ``images``, ``protocols``, ``errors``.
"""
