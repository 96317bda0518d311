"""The lay words of the EMA leaflet template's sub-headings and advice, as query cues of
the section they belong to (A-18; the rows of ``pipeline.section_vocabulary``'s table take
them). Patients rarely ask with the heading words: "does Resolor give you headaches",
"forgot my Mounjaro injection", "can I crush Slenyto tablets", "a couple of beers on
Keppra". Each word was counted in the stored leaflets before it was added: most leaflet
sections that use it are that section (counts in the comments, "n / m": sections of that
number / all sections with the word; eval-results/2026-12-05-lay-section-cues/).

Patterns are case-insensitive regular expressions, matched word-bounded, as the table's.
"""

from __future__ import annotations

__all__ = [
    "ADVERSE_LAY_CUES",
    "DESCRIPTION_LAY_CUES",
    "DOSAGE_LAY_CUES",
    "STORAGE_LAY_CUES",
    "WARNINGS_LAY_CUES",
]

#: Section 3 (``dosage_and_administration``).
DOSAGE_LAY_CUES: tuple[str, ...] = (
    # the lay words of the leaflet's section 3 sub-headings and its advice
    # ("If you forget to take", "swallow whole", "do not crush or chew"), each in
    # section 3 of 85-99 % of the leaflet sections that use it (forget 680 / 733,
    # crush 162 / 184, chew 142 / 147, swallow whole 192 / 193, split or halve
    # 50 / 54, double dose 477 / 485, how many 70 / 74, morning or evening 165 /
    # 193): "forgot my Mounjaro injection", "can I crush Slenyto tablets"
    r"forg[oe]t(?:s|ten|ting)?",
    r"crush(?:ed|es|ing)?",
    r"chew(?:ed|s|ing)?",
    r"swallow(?:ed|s|ing)? (?:[\w-]+ ){0,2}?whole",
    r"(?:split|halve|break|cut) (?:[\w-]+ ){0,2}?(?:tablets?|pills?|in half)",
    r"sprinkl\w*",
    r"open (?:the |a |my |his |her )?(?:[\w-]+ )?capsules?",
    r"dissolv\w* (?:[\w-]+ ){0,2}?(?:in )?(?:water|juice|milk)",
    r"double (?:dose|up)",
    r"how many (?:[\w-]+ )?(?:tablets?|capsules?|pills?|puffs?|drops?|injections?|"
    r"sprays?|sachets?|patch(?:es)?|units?|times)",
    r"(?:in the )?morning or (?:in the |at )?(?:evening|night|bedtime)",
    r"(?:what|which) time (?:of (?:the )?day )?(?:should|do|to|is best)",
    r"at bedtime",
    r"where (?:to|should i|do i|do you|should you|can i) inject",
    r"how long (?:is|does|do|will) (?:the |a |an |my |each |one |his |her )?"
    r"(?:[\w-]+ ){0,2}?(?:infusions?|drips?|treatment|courses?|patch(?:es)?)",
    # "If you vomit after taking" is in section 3; "does it make you vomit" is a
    # side effect (adverse_reactions' "make you" cue)
    r"(?:vomit(?:s|ed|ing)?|(?:was|were|is|am|been) sick|threw up|throws? up) "
    r"(?:[\w-]+ ){0,4}?(?:after|within) (?:taking|having|swallowing|the|a|an|my|his|"
    r"her|their|it|each|every)",
    r"sp[ia]ts? (?:[\w-]+ ){0,2}?out",
    r"stop(?:s|ped|ping)? (?:[\w-]+ ){0,2}?(?:all at once|suddenly|abruptly|cold turkey)",
    r"before breakfast",
    r"(?:not|n't) eat\w* (?:anything )?(?:before|after|for)",
    r"(?:relation|relative) to (?:food|meals?|eating)",
)

#: Section 2 (``warnings``).
WARNINGS_LAY_CUES: tuple[str, ...] = (
    # section 2's sub-headings in lay words (food, drink and alcohol;
    # pregnancy, breast-feeding and fertility; contact lenses; surgery and the
    # dentist), each in section 2 of 60-98 % of the leaflet sections that use it
    # (grapefruit 88 / 105, fertility 243 / 264, conceive or trying for a baby
    # 678 / 684, condoms 84 / 93, sperm 49 / 64, the pill 99 / 109, contact lenses
    # 18 / 23, sunscreen 55 / 64, dentist 35 / 50, eye tests 20 / 27, beer or wine
    # 22 / 37)
    r"grapefruits?",
    r"fertil(?:e|ity)",
    r"conceiv\w*",
    r"(?:try|trying|tried|want|wanting|plan|planning) (?:to have |for |to get |on having )"
    r"(?:a )?(?:baby|babies|pregnant|family)",
    r"condoms?",
    r"sperm",
    r"the (?:contraceptive )?pill",
    r"contact lens(?:es)?",
    r"sunscreen|sun ?cream|sun protection|sunbathing|sunbeds?",
    r"dentists?|dental (?:work|treatment|surgery)",
    r"eye (?:tests?|exam\w*|checks?)",
    r"(?:before|having|have|need) (?:an? |my |the |any )?(?:surgery|operation)",
    r"beers?|wine|pints?",
    r"(?:have|having|had) (?:a |any |some |a few |a couple of )?drinks?(?! test)",
    r"couple of drinks",
)

#: Section 4 (``adverse_reactions``): a question's verb of causing.
ADVERSE_LAY_CUES: tuple[str, ...] = (
    # "does Resolor give you headaches", "can Vazkepa bring on gout", "is it
    # normal to feel dizzy since starting X"
    # not "what will the hospital give her" (a treatment question)
    r"(?<!what )(?<!which )(?<!who )(?<!how )"
    r"(?:does|do|did|can|could|will|would|might|may) (?:[\w-]+ ){1,3}?"
    r"(?:cause|give (?:me|you|him|her|them|people|patients)|bring on|trigger|lead to)",
    r"(?:bring|brings|bringing|brought) on",
    r"(?:is|are|was|were) (?:[\w-]+ ){1,2}?linked (?:to|with)",
    r"(?:is|it's|is it) (?:it )?(?:normal|common|usual) to",
    r"since (?:starting|i started|he started|she started|being on|going on|switching)",
)

#: Section 5 (``storage``).
STORAGE_LAY_CUES: tuple[str, ...] = (
    # "after first opening" is in section 5 of 75 of the 85 leaflet sections
    # that say it
    r"(?:after|once|since) (?:first )?(?:opening|opened|it'?s been opened|it is opened)",
    r"(?:been|is|was|are|were) opened",
)

#: Section 6 (``description``).
DESCRIPTION_LAY_CUES: tuple[str, ...] = (
    # section 6 describes the tablet (shape and markings 177 / 195 leaflet
    # sections) and lists gelatin (80 / 82)
    r"(?:what|which) colou?rs?",
    r"shape|engraved|imprint\w*|debossed|markings?",
    r"gelatine?",
)
