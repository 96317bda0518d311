"""The lay words of the EMA leaflet template's sub-headings and advice, as query cues of
the section they belong to (A-18; ``SectionWords.lay_cues`` of
``pipeline.section_vocabulary``'s table). Patients rarely ask with the heading words:
"does Resolor give you headaches", "forgot my Mounjaro injection", "can I crush Slenyto
tablets", "a couple of beers on Keppra".

Two kinds of pattern:
- words of the leaflets' own text ("grapefruit", "crush", "after first opening"): each
  was kept only where most of the stored leaflet sections that the pattern matches are
  that section (``python scripts/section_cue_counts.py`` prints the counts;
  eval-results/2026-12-05-lay-section-cues/);
- a question's own form ("does X cause", "since starting"), which leaflets do not write.

They cue a section only in a question that names a medicine (a drug, brand or class):
"does diabetes cause kidney damage" and "does soy affect sperm quality" ask about no
leaflet. Patterns are case-insensitive regular expressions, matched word-bounded, as the
table's. ``NOT_AN_AMOUNT_TAKEN`` (A-40), at the end, is part of a table cue of its own, which
needs no medicine named.
"""

from __future__ import annotations

__all__ = [
    "ADVERSE_LAY_CUES",
    "DATED_DOSE",
    "DESCRIPTION_LAY_CUES",
    "DOSAGE_LAY_CUES",
    "DOSE_RAISED",
    "NOT_AN_AMOUNT_TAKEN",
    "SIDE_EFFECT_SHORTHAND",
    "STORAGE_LAY_CUES",
    "TREATMENT_CAUSED",
    "TREATMENT_REQUEST_CUES",
    "WARNINGS_LAY_CUES",
]

#: Section 3 (``dosage_and_administration``): "If you forget to take", "swallow whole",
#: "do not crush or chew", "If you vomit after taking", "If you stop taking".
DOSAGE_LAY_CUES: tuple[str, ...] = (
    # "forgot my Mounjaro injection", not "I keep forgetting things"
    r"forg[oe]t(?:ten)? (?:to (?:take|use|give|inject|have)|(?:my|his|her|their|a|an|the|"
    r"one|two|this|today's|\w+'s) )",
    # "can I crush Slenyto tablets", "be chewed", not "crushing chest pain" or "jaw pain
    # when chewing"
    r"(?:chew|crush)(?:ed|es|ing)? (?:[\w-]+ ){0,2}?(?:tablets?|tabs|capsules?|pills?|it|them)",
    r"be (?:chewed|crushed)",
    r"(?:chew|crush)(?:ed)? or (?:swallow|chew|crush)\w*",
    r"swallow(?:ed|s|ing)? (?:[\w-]+ ){0,2}?whole",
    r"(?:split|halve|break|cut) (?:[\w-]+ ){0,2}?(?:tablets?|pills?|in half)",
    r"sprinkl\w*",
    r"open (?:the |a |my |his |her )?(?:[\w-]+ )?capsules?",
    r"double (?:dose|up)",
    r"how many (?:[\w-]+ )?(?:tablets?|capsules?|pills?|puffs?|drops?|injections?|"
    r"sprays?|sachets?|patch(?:es)?)",
    r"(?:in the )?morning or (?:in the |at )?(?:evening|night|bedtime)",
    r"where (?:to|should i|do i|do you|should you|can i) inject",
    r"(?:what|which) time (?:of (?:the )?day )?(?:should|do|to|is best)",
    r"at bedtime",
    r"how long (?:is|does|do|will) (?:the |a |an |my |each |one |his |her )?"
    r"(?:[\w-]+ ){0,2}?(?:infusions?|drips?|treatment|courses?|patch(?:es)?)",
    # "I was sick half an hour after taking my capsules"; "vomiting after every meal" is
    # a side effect
    r"(?:vomit(?:s|ed|ing)?|(?:was|were|is|am|been) sick|threw up|throws? up) "
    r"(?:[\w-]+ ){0,4}?(?:after|within) (?:[\w-]+ ){0,2}?(?:taking|swallowing|taken|took|"
    r"(?:the|a|my|his|her) (?:dose|tablets?|capsules?|pills?|medicine))",
    r"stop(?:s|ped|ping)? (?:[\w-]+ ){0,2}?(?:all at once|suddenly|abruptly|cold turkey)",
    r"before breakfast",
    # "how long should I not eat before taking Cabometyx"; not "I haven't eaten for days"
    r"(?:not|don't|dont|shouldn't|cannot|can't) eat (?:anything )?(?:before|after|for)",
    r"(?:relation|relative) to (?:food|meals?|eating)",
)

#: Section 2 (``warnings``): food, drink and alcohol; pregnancy, breast-feeding and
#: fertility; contact lenses; sun protection; tests.
WARNINGS_LAY_CUES: tuple[str, ...] = (
    r"grapefruits?",
    r"fertil(?:e|ity)(?! (?:treatment|medicines?|drugs?|injections?|clinic))",
    r"conceiv\w*",
    r"(?:try|trying|tried|want|wanting|plan|planning) (?:to have |for |to get |on having )"
    r"(?:a )?(?:baby|babies|pregnant|family)",
    r"condoms?",
    r"sperm",
    r"contact lens(?:es)?",
    r"sunscreen|sun ?cream|sun protection|sunbathing|sunbeds?",
    r"dentists?",
    r"eye (?:tests?|exam\w*|checks?)",
    r"beers?|wine",
    r"(?:have|having|had) (?:a |any |some |a few |a couple of )?drinks?(?! of water| test)",
    r"couple of drinks",
)

#: A dose raised in the past, as a question dates a symptom by it ("the dose went up").
DOSE_RAISED = (
    r"(?:went|has gone|had gone|got|was|were|has been|had been) "
    r"(?:up|increased|raised|upped|doubled)"
)

#: A symptom dated by a dose that was raised ("since the Fycompa dose went up", "since
#: they upped my dose"): a side-effect cue, inside which "dose" cues no dosage.
DATED_DOSE: tuple[str, ...] = (
    r"since (?:the |my |his |her |their )?(?:[\w-]+ )?doses? (?:of [\w-]+ )?" + DOSE_RAISED,
    r"since (?:they |the doctor |my doctor |the doctors )?(?:upped|increased|raised|doubled"
    r"|increasing|doubling|upping) (?:the |my |his |her |their )?(?:[\w-]+ )?doses?",
)

#: A-40: clinicians' shorthand for side effects, in capitals only ("known SE??", "?SE",
#: "ADRs"), and "s/e"; lower-case "se" and "ae" are words of other languages and names.
#: A lay cue (a medicine must be named), and not a compass point, a standard error or an
#: acute exacerbation ("SE Asia", "SE of the mean", "AE-COPD").
SIDE_EFFECT_SHORTHAND: tuple[str, ...] = (
    r"(?-i:(?:SEs?|ADRs?|AEs?)(?![- ]?(?:COPD|USA?|UK|[A-Z][a-z])))(?! of (?:the )?means?\b)",
    r"s/e",
)

#: Section 4 (``adverse_reactions``): the question's own form (a medicine as the subject
#: of a verb of causing, a symptom since starting it).
ADVERSE_LAY_CUES: tuple[str, ...] = (
    # "does Resolor give you headaches", "can Vazkepa bring on gout"; not "can I give him
    # his Keppra early" nor "what will the hospital give her"
    r"(?<!what )(?<!which )(?<!who )(?<!how )"
    r"(?:does|do|did|can|could|will|would|might|may) (?!i |we |you |they )(?:[\w-]+ ){1,3}?"
    r"(?:cause|give you|bring on|trigger|lead to)",
    r"(?:bring|brings|bringing|brought) on",
    r"(?:is|are|was|were) (?:[\w-]+ ){1,2}?linked (?:to|with)",
    r"is (?:it )?(?:normal|common|usual) to (?:feel|get|have|be|lose|gain|put|notice|see)",
    r"since (?:starting|i started|he started|she started|being on|going on|switching)",
    # a symptom since a dose was raised: "since the Fycompa dose went up"
    *DATED_DOSE,
    *SIDE_EFFECT_SHORTHAND,
)

#: Section 5 (``storage``): "after first opening".
STORAGE_LAY_CUES: tuple[str, ...] = (
    r"(?:after|once|since) (?:first )?(?:opening|opened|it'?s been opened|it is opened)",
    r"(?:been|is|was|are|were) opened",
)

#: Section 6 (``description``): what the tablet looks like and what it is made of.
DESCRIPTION_LAY_CUES: tuple[str, ...] = (
    r"(?:what|which) colou?rs? (?:is|are) (?:the |my |his |her )?(?:[\w-]+ )?"
    r"(?:tablets?|capsules?|pills?|pens?|solution|liquid|injection)",
    r"engraved|imprint\w*|debossed|embossed",
    r"gelatine?",
)

#: A-26: a request for something that treats or prevents a condition asks for the
#: indications (section 1, "What X is and what it is used for"), a class named or none:
#: "antibiotic for Delhi belly", "a jab that protects against lockjaw", "what can the
#: GP prescribe". Read only where the question names no drug (a class is
#: no drug) and cues no other section (``pipeline.intent.section_cues_for``): "cream
#: for the rash Tagrisso gave me" asks about Tagrisso, "dose of antibiotics for a child"
#: for a dosage.
TREATMENT_REQUEST_CUES: tuple[str, ...] = (
    # "tablets for piles", "a jab that protects against lockjaw"; not "drugs for which a
    # REMS is required", "medicines to stop before surgery"
    r"(?:treatments?|medicines?|medications?|meds|drugs?|tablets?|pills?|creams?|"
    r"ointments?|gels?|drops|sprays?|antibiotics?|antivirals?|antifungals?|vaccines?|"
    r"jabs?|injections?|inhalers?|mouthwash(?:es)?|shampoos?|therap(?:y|ies)|"
    r"remed(?:y|ies)|cures?) (?:for(?! (?:which|whom)\b)|against|"
    r"to (?:treat|prevent|cure|clear|stop(?! (?:before|taking|using|prior)\b))|"
    r"that (?:treats?|prevents?|stops?|cures?|clears?|protects?))",
    # "what can the GP prescribe for piles"; not "what should I take before surgery",
    # "what can I take with my blood pressure tablets"
    r"what (?:can|should|do|does|would) (?:i|we|you|he|she|they|doctors?|gps?|"
    r"(?:my|the|our) (?:doctor|gp|pharmacist)) (?:take(?! blood)|use|give|prescribe|try)"
    r"(?: [\w'-]+){0,3}? (?:for|to (?:treat|help|stop|prevent))",
    r"how (?:is|are) \w+(?: \w+)? treated",
    r"(?:what|which) (?:[\w-]+ )?treats?",
)

#: A-26: what a medicine did, not what it is for: "my tablets for diabetes gave me a rash".
TREATMENT_CAUSED: tuple[str, ...] = (
    r"(?:gave|giving|caused|causing|(?:has|have) given) (?:me|him|her|them|us|my|his)",
)

#: A-27: a medicine named by a plain word, no drug or class: "iron tablets black stools",
#: "what do the capsules look like". Such a question is read with A-18's lay cues as if
#: a drug were named, before A-27 gives it the indications. "drops" and "patch" only as
#: a medicine ("eye drops", "the patch"; not "my blood pressure drops", "an itchy patch").
MEDICINE_WORDS: tuple[str, ...] = (
    r"medicines?|medications?|meds|tablets?|pills?|capsules?|caplets?|creams?|ointments?|"
    r"gels?|lotions?|sprays?|inhalers?|injections?|jabs?|sachets?|lozenges?|"
    r"suppositor(?:y|ies)|pessar(?:y|ies)|syrups?|mouthwash(?:es)?|implants?|infusions?|"
    r"vaccines?|antibiotics?|antivirals?|antifungals?|painkillers?",
    r"(?:eye|ear|nose|nasal|the|my|his|her|these|those) drops",
    r"(?:nicotine|hrt|pain|contraceptive|skin|the|my|his|her|this|these) patch(?:es)?",
)

#: A-27: no question about a condition: "drugs for which a REMS programme is required",
#: "medicines to stop before surgery", "tablets to stop 7 days before an operation" (the
#: exclusions of A-26's requests); not "which cream for which type of eczema", "is
#: there anything to stop it before my operation".
NOT_ABOUT_A_CONDITION: tuple[str, ...] = (
    r"for (?:which|whom)(?! (?:types?|kinds?|stages?|forms?|sorts?)\b)",
    r"(?:stop|stops|stopped|stopping) (?:taking |using )?(?:\d+ (?:days?|weeks?) )?"
    r"(?:before|prior to)",
)


#: A-40: after "too much", what is no amount of a medicine taken: something in the body,
#: sun or drink ("Lokelma for too much potassium in my blood" is a condition, and cued
#: the dosage section as an overdose); "too much iron syrup" stays an overdose. A negative
#: lookahead, appended to the cue "too much".
NOT_AN_AMOUNT_TAKEN = (
    r"(?!(?: [\w-]+){1,2} in (?:my|his|her|your|their|the|our) (?:blood|urine|body)\b"
    r"|(?: [\w-]+){1,2} levels?\b| (?:sun|sunlight|alcohol|weight)\b)"
)
