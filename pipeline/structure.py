"""Chemical structures as chemists compare them (SPEC.md A-3, extends R-INT-1 / R-T2-9).

- :func:`standardize`: the *parent* of a SMILES string: salts, counter-ions and solvents
  stripped, the largest organic fragment kept, charges neutralised; its canonical SMILES
  and standard InChIKey identify it (the steps of the ChEMBL structure pipeline,
  Bento et al. 2020, with RDKit's ``rdMolStandardize``).
- :func:`is_structure_token`: a query token is a structure only if RDKit parses it and it
  has a ring or at least six heavy atoms, so ``OS/PFS``, ``AND/OR``, ``CO``, ``HER2`` or
  ``5-FU`` are words, not molecules.
- :func:`morgan_fingerprint` / :func:`tanimoto`: Morgan (ECFP4-like) fingerprints, radius
  2, 2048 bits, and their Tanimoto similarity (Rogers & Hahn 2010).

Pure Python + RDKit + numpy (DESIGN.md layers: no torch, no ray). RDKit's own log output
is blocked while this module calls it: an unparsable token is an ordinary outcome here,
not a warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from rdkit import Chem, rdBase
from rdkit.Chem import rdFingerprintGenerator
from rdkit.Chem.MolStandardize import rdMolStandardize

__all__ = [
    "COUNTER_ION_SMILES",
    "FINGERPRINT_BITS",
    "FINGERPRINT_BYTES",
    "MIN_STRUCTURE_HEAVY_ATOMS",
    "MORGAN_RADIUS",
    "STRUCTURE_RULES_VERSION",
    "Structure",
    "fingerprint_on_bits",
    "is_structure_token",
    "morgan_fingerprint",
    "standardize",
    "structure_tokens",
    "tanimoto",
    "trim_token",
]

#: Version of the standardisation and fingerprint rules below: stored structure data made
#: under another version is stale (the ingest content hash of a compound includes it, so a
#: change here re-ingests compounds). Bump it when the rules or the table change.
STRUCTURE_RULES_VERSION = "a3.1"
#: Morgan fingerprint radius (2 = ECFP4-like) and length in bits (SPEC A-3).
MORGAN_RADIUS = 2
FINGERPRINT_BITS = 2048
FINGERPRINT_BYTES = FINGERPRINT_BITS // 8
#: A ring-free token is a structure only from this many heavy atoms (SPEC A-3).
MIN_STRUCTURE_HEAVY_ATOMS = 6
#: Longest token handed to RDKit (large peptides stay well below).
MAX_TOKEN_CHARS = 2000

#: Counter-ions and solvents of pharmaceutical salts and solvates, as neutral SMILES
#: (the usual salt formers, Stahl & Wermuth, Handbook of Pharmaceutical Salts, 2011).
#: A fragment whose neutral, stereo-free canonical SMILES is listed here is removed unless
#: nothing else is left; one-heavy-atom inorganic fragments (metal ions, halides, water,
#: ammonia) are removed by rule. RDKit's default ``FragmentRemover`` list lacks the
#: organic acids (citrate, pamoate, aspartate, ...), which are larger than small drugs and
#: would win the largest-fragment choice.
COUNTER_ION_SMILES: tuple[str, ...] = (
    "OS(=O)(=O)O",  # sulfuric acid
    "OP(=O)(O)O",  # phosphoric acid
    "O=[N+]([O-])O",  # nitric acid
    "OCl(=O)(=O)=O",  # perchloric acid
    "OC(=O)O",  # carbonic acid
    "OC=O",  # formic acid
    "CC(=O)O",  # acetic acid
    "OC(=O)C(F)(F)F",  # trifluoroacetic acid
    "CCC(=O)O",  # propionic acid
    "OC(=O)C(=O)O",  # oxalic acid
    "OC(=O)CC(=O)O",  # malonic acid
    "OC(=O)CCC(=O)O",  # succinic acid
    "OC(=O)CCCCC(=O)O",  # adipic acid
    "OC(=O)C=CC(=O)O",  # maleic / fumaric acid
    "OC(=O)CC(O)C(=O)O",  # malic acid
    "OC(=O)C(O)C(O)C(=O)O",  # tartaric acid
    "OC(=O)CC(O)(CC(=O)O)C(=O)O",  # citric acid
    "CC(O)C(=O)O",  # lactic acid
    "OCC(O)C(O)C(O)C(O)C(=O)O",  # gluconic acid
    "OC(=O)c1ccccc1",  # benzoic acid
    "OC(=O)c1ccccc1O",  # salicylic acid
    "OC(=O)c1ccc2ccccc2c1O",  # xinafoic acid (1-hydroxy-2-naphthoic)
    "OC(=O)c1cc2ccccc2c(Cc2c(O)c(C(=O)O)cc3ccccc23)c1O",  # pamoic acid
    "CCCCCCCCCCCCCCCCCC(=O)O",  # stearic acid
    "CS(=O)(=O)O",  # methanesulfonic acid (mesylate)
    "CCS(=O)(=O)O",  # ethanesulfonic acid (esylate)
    "OS(=O)(=O)CCS(=O)(=O)O",  # ethane-1,2-disulfonic acid (edisylate)
    "OCCS(=O)(=O)O",  # isethionic acid
    "OS(=O)(=O)c1ccccc1",  # benzenesulfonic acid (besylate)
    "Cc1ccc(S(=O)(=O)O)cc1",  # p-toluenesulfonic acid (tosylate)
    "OS(=O)(=O)c1ccc2ccccc2c1",  # naphthalene-2-sulfonic acid (napsylate)
    "CC1(C)C2CCC1(CS(=O)(=O)O)C(=O)C2",  # camphorsulfonic acid (camsylate)
    "NC(CC(=O)O)C(=O)O",  # aspartic acid
    "NC(CCC(=O)O)C(=O)O",  # glutamic acid
    "NCCCCC(N)C(=O)O",  # lysine
    "NC(=N)NCCCC(N)C(=O)O",  # arginine
    "CNCC(O)C(O)C(O)C(O)CO",  # meglumine
    "NC(CO)(CO)CO",  # tromethamine
    "NCCO",  # ethanolamine
    "OCCNCCO",  # diethanolamine
    "C[N+](C)(C)CCO",  # choline
    "CC(C)(C)N",  # tert-butylamine (erbumine)
    "c1ccc(CNCCNCc2ccccc2)cc1",  # benzathine
    "CO",  # methanol
    "CCO",  # ethanol
    "CC(C)O",  # isopropanol
    "CC(C)=O",  # acetone
    "CS(C)=O",  # dimethyl sulfoxide
)

_SMILES_CHARACTERS = re.compile(r"^[A-Za-z0-9@+\-\[\]()=#$/\\%.:*~]+$")
_BRACKET_ATOM = re.compile(r"\[[^\[\]]{1,20}\]")
#: Letters allowed outside brackets: the organic subset (B C N O P S F Cl Br I, aromatic
#: b c n o p s), after ``Cl`` / ``Br`` are taken out.
_UNBRACKETED_LETTERS = re.compile(r"^[BCNOPSFIbcnops]*$")
_TRIM = ".,;:!?\"'"


@dataclass(frozen=True)
class Structure:
    """A standardised structure (the parent of the input).

    Attributes:
        canonical_smiles: RDKit canonical isomeric SMILES of the parent.
        inchikey: standard InChIKey of the parent (27 characters; ``""`` when RDKit
            cannot compute one).
        heavy_atoms: heavy atoms of the parent.
        rings: rings (SSSR count) of the parent.
        source_smiles: canonical SMILES of the whole input, fragments and charges as
            given (tells a salt form from its free base when parents are equal).
        fragments_removed: input fragments dropped (counter-ions, solvents, smaller
            fragments).
        neutralised: whether the Uncharger changed charges of the kept fragment.
    """

    canonical_smiles: str
    inchikey: str
    heavy_atoms: int
    rings: int
    source_smiles: str
    fragments_removed: int = 0
    neutralised: bool = False

    @property
    def is_source_parent(self) -> bool:
        """True when the input already was its own parent: one fragment, no charge
        neutralised (a free base or free acid, not a salt)."""
        return self.fragments_removed == 0 and not self.neutralised


def trim_token(token: str) -> str:
    """``token`` without surrounding prose punctuation (``.,;:!?"'``) and without
    wrapping parentheses: unbalanced (``(CCOC(C)=O``) or around the whole token
    (``(c1ccccc1)``). A SMILES never starts with ``(``, so nothing of it is lost."""
    token = token.strip(_TRIM)
    while token:
        opens, closes = token.count("("), token.count(")")
        if token[0] == "(" and opens > closes:
            token = token[1:]
        elif token[-1] == ")" and closes > opens:
            token = token[:-1]
        elif token[0] == "(" and _closing_paren(token) == len(token) - 1:
            token = token[1:-1]
        else:
            break
        token = token.strip(_TRIM)
    return token


def _closing_paren(token: str) -> int:
    """Index of the parenthesis that closes ``token[0] == "("``, or -1."""
    depth = 0
    for index, character in enumerate(token):
        depth += {"(": 1, ")": -1}.get(character, 0)
        if depth == 0:
            return index
    return -1


def _plausible_smiles(token: str) -> bool:
    """Cheap character-level test before RDKit: SMILES characters only, and every letter
    outside brackets an organic-subset atom. Rejects ordinary words (``niraparib``,
    ``AND/OR``, ``IL-6``, ``HER2``) without parsing them."""
    if not token or len(token) > MAX_TOKEN_CHARS or not _SMILES_CHARACTERS.match(token):
        return False
    unbracketed = _BRACKET_ATOM.sub("", token)
    if "[" in unbracketed or "]" in unbracketed:
        return False
    letters = re.sub(r"[^A-Za-z]", "", unbracketed.replace("Cl", "").replace("Br", ""))
    if not _UNBRACKETED_LETTERS.match(letters):
        return False
    return bool(letters) or "[" in token


def _parse(smiles: str) -> Chem.Mol | None:
    """RDKit molecule of ``smiles`` (sanitised), or None; RDKit logging blocked."""
    if not smiles or len(smiles) > MAX_TOKEN_CHARS:
        return None
    with rdBase.BlockLogs():
        try:
            return Chem.MolFromSmiles(smiles)
        except (RuntimeError, ValueError):  # pragma: no cover - RDKit returns None
            return None


@lru_cache(maxsize=8192)
def is_structure_token(token: str) -> bool:
    """True when ``token`` is a chemical structure (SPEC A-3, R-INT-1): RDKit parses it
    and it has at least one ring or at least ``MIN_STRUCTURE_HEAVY_ATOMS`` heavy atoms.

    ``c1ccccc1``, ``CCOC(C)=O`` and salt forms (``...c1OCCOC.Cl``) are structures;
    ``OS/PFS``, ``AND/OR``, ``CO``, ``NaCl``, ``IL-6``, ``PD-1``, ``HER2``, ``5-FU`` and
    drug names are not. Surrounding punctuation is trimmed first (:func:`trim_token`).
    """
    token = trim_token(token)
    if not _plausible_smiles(token):
        return False
    mol = _parse(token)
    if mol is None:
        return False
    return mol.GetRingInfo().NumRings() >= 1 or mol.GetNumHeavyAtoms() >= MIN_STRUCTURE_HEAVY_ATOMS


def structure_tokens(query: str) -> list[str]:
    """Whitespace tokens of ``query`` that are structures, trimmed, in query order."""
    return [trim_token(token) for token in query.split() if is_structure_token(token)]


#: RDKit standardisers, built once (constructing an Uncharger costs about 80 us).
_UNCHARGER = rdMolStandardize.Uncharger()
_LARGEST_FRAGMENT = rdMolStandardize.LargestFragmentChooser(preferOrganic=True)


@lru_cache(maxsize=1)
def _counter_ion_keys() -> frozenset[str]:
    keys = set()
    for smiles in COUNTER_ION_SMILES:
        mol = _parse(smiles)
        if mol is None:  # pragma: no cover - the table is checked by the unit tests
            raise ValueError(f"counter-ion table entry {smiles!r} does not parse")
        keys.add(_fragment_key(mol))
    return frozenset(keys)


def _fragment_key(fragment: Chem.Mol) -> str:
    """Neutral, stereo-free canonical SMILES of one fragment (counter-ion table key)."""
    neutral = _UNCHARGER.uncharge(fragment)
    return Chem.MolToSmiles(neutral, isomericSmiles=False)


def _is_counter_ion(fragment: Chem.Mol) -> bool:
    heavy = fragment.GetNumHeavyAtoms()
    if heavy == 0:
        return True  # [H+]
    if heavy == 1 and fragment.GetAtomWithIdx(0).GetSymbol() != "C":
        return True  # metal ions, halides, water, ammonia
    return _fragment_key(fragment) in _counter_ion_keys()


def _parent(mol: Chem.Mol) -> tuple[Chem.Mol, int, bool]:
    """Parent of ``mol``, how many fragments were dropped and whether charges were
    neutralised: clean-up (normalise functional groups, disconnect metals), counter-ions
    / solvents removed unless nothing else is left, the largest organic fragment kept,
    charges neutralised."""
    cleaned = rdMolStandardize.Cleanup(mol)
    fragments = list(Chem.GetMolFrags(cleaned, asMols=True, sanitizeFrags=True))
    kept = [fragment for fragment in fragments if not _is_counter_ion(fragment)] or fragments
    if len(kept) == 1:
        chosen = kept[0]
    else:
        combined = kept[0]
        for fragment in kept[1:]:
            combined = Chem.CombineMols(combined, fragment)
        chosen = _LARGEST_FRAGMENT.choose(combined)
    parent = _UNCHARGER.uncharge(chosen)
    neutralised = Chem.MolToSmiles(parent) != Chem.MolToSmiles(chosen)
    return parent, len(fragments) - 1, neutralised


@lru_cache(maxsize=8192)
def standardize(smiles: str) -> Structure | None:
    """The standardised parent of ``smiles`` (SPEC A-3), or None when RDKit cannot parse
    or standardise it.

    Steps: parse; ``rdMolStandardize.Cleanup``; drop counter-ions and solvents
    (:data:`COUNTER_ION_SMILES`, single inorganic atoms) unless nothing else is left;
    ``LargestFragmentChooser(preferOrganic=True)`` among the rest; ``Uncharger``;
    canonical SMILES and standard InChIKey of the result. A salt and its free base, or a
    carboxylate and its acid, give the same parent and InChIKey. Results are cached.
    """
    smiles = (smiles or "").strip()
    mol = _parse(smiles)
    if mol is None or mol.GetNumAtoms() == 0:
        return None
    with rdBase.BlockLogs():
        try:
            parent, removed, neutralised = _parent(mol)
            canonical = Chem.MolToSmiles(parent)
            inchikey = Chem.MolToInchiKey(parent) or ""
        except (RuntimeError, ValueError, Chem.rdchem.MolSanitizeException):
            return None
    return Structure(
        canonical_smiles=canonical,
        inchikey=inchikey,
        heavy_atoms=parent.GetNumHeavyAtoms(),
        rings=parent.GetRingInfo().NumRings(),
        source_smiles=Chem.MolToSmiles(mol),
        fragments_removed=removed,
        neutralised=neutralised,
    )


_MORGAN = rdFingerprintGenerator.GetMorganGenerator(radius=MORGAN_RADIUS, fpSize=FINGERPRINT_BITS)


def _pack(bits: np.ndarray) -> bytes:
    return np.packbits(bits.astype(np.uint8), bitorder="little").tobytes()


@lru_cache(maxsize=8192)
def _fingerprint_of_smiles(canonical_smiles: str) -> bytes:
    mol = _parse(canonical_smiles)
    if mol is None:
        return bytes(FINGERPRINT_BYTES)
    return _pack(_MORGAN.GetFingerprintAsNumPy(mol))


def morgan_fingerprint(structure: Structure | Chem.Mol) -> bytes:
    """Morgan fingerprint, radius 2, 2048 bits, packed into 256 bytes (SPEC A-3).

    Bit ``i`` is bit ``i % 8`` (least significant first) of byte ``i // 8``, the packing
    of Milvus ``BINARY_VECTOR`` data (Milvus docs, "Binary Vector":
    ``byte_array[i // 8] |= 1 << (i % 8)``), i.e. ``np.packbits(bits, bitorder="little")``.
    A :class:`Structure` is fingerprinted from its canonical parent SMILES (so stored and
    query fingerprints come from the same molecule graph; cached); a ``Chem.Mol`` as given.
    Computed with ``rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)``.
    """
    if isinstance(structure, Structure):
        return _fingerprint_of_smiles(structure.canonical_smiles)
    return _pack(_MORGAN.GetFingerprintAsNumPy(structure))


def _bits(fingerprint: bytes) -> np.ndarray:
    if len(fingerprint) != FINGERPRINT_BYTES:
        raise ValueError(f"fingerprint must be {FINGERPRINT_BYTES} bytes, got {len(fingerprint)}")
    return np.unpackbits(np.frombuffer(fingerprint, dtype=np.uint8), bitorder="little")


def fingerprint_on_bits(fingerprint: bytes) -> np.ndarray:
    """Indices of the set bits of a packed fingerprint: (k,) int64, ascending.

    Raises:
        ValueError: ``fingerprint`` is not 256 bytes.
    """
    return np.flatnonzero(_bits(fingerprint)).astype(np.int64)


def tanimoto(a: bytes, b: bytes) -> float:
    """Tanimoto (Jaccard) similarity of two packed fingerprints: ``|a & b| / |a | b|`` in
    [0, 1]; 0.0 when both are empty. Milvus' JACCARD distance is ``1 - tanimoto``.

    Raises:
        ValueError: either is not 256 bytes.
    """
    bits_a, bits_b = _bits(a).astype(bool), _bits(b).astype(bool)
    union = int(np.count_nonzero(bits_a | bits_b))
    if union == 0:
        return 0.0
    return int(np.count_nonzero(bits_a & bits_b)) / union
