"""The recurring-problem workload of the learning benchmark, generated from a seed.

Each problem type has a few *problem words* (what people say when it recurs) and a
disjoint set of *fixing words* (what the one note that fixes it says). Its fixing
note is written only from its fixing words and template words every kind of note
shares; its symptom notes use its problem words and fix nothing; distractor notes
fill the rest from words no type owns, in the same templates. Questions are
templates of filler common to all types, filled with a type's problem words.

Invariant: no question shares a word (or a Snowball stem) with its type's fixing
note, so words alone cannot find the fix, and what a reader learns from outcomes
is the only path from a question to it. The same seed gives the same notes and
questions.
"""

from __future__ import annotations

import functools
import hashlib
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

PROBLEM_WORDS = 8
FIXING_WORDS = 6
SYMPTOM_NOTES = 3  # per type
TRAINING = 5  # wordings per type, and as many held out
HELD_OUT = 5
HELD_OUT_NEW_TEMPLATES = 3  # of the held-out wordings, in templates no training wording uses
HELD_OUT_ONLY_TEMPLATES = 4  # templates kept out of training altogether
MIN_NOISE_WORDS = 60  # distractors need a vocabulary of their own

# Ordinary English nouns (a few verbs and adjectives) of technical and everyday
# flavour; no two share a Snowball stem, and none is a stop word.
WORDS = tuple(
    """
    keyring resolver thermostat ledger anchor antenna apron archive armchair attic avocado axle
    backpack badge bagel balcony ballot bamboo bandage banner barrel basement basket battery beacon
    beaker bellows bench bicycle binder biscuit blanket blender blossom blueprint boiler bolt
    bookmark boulder bracket brakeline breadbox brick bridge broom bucket buckle buffer bulletin
    bumper bundle burner button cabinet cable cactus calendar camera campfire candle canoe canvas
    capsule caravan carbon cardigan carpet carriage cartridge cashew casket catalog cauldron ceiling
    cellar chalk chandelier channel chapel charcoal charger chassis cheddar chimney chisel chorus
    cider cinnamon circuit clamp clarinet clipboard cloak clockwork closet cobweb cockpit coconut
    coffer compass compost compressor concrete condenser console cookie copper coral cork corridor
    cottage cotton couch counter courier crate crayon crescent cricket crowbar cruiser crystal
    cupboard curtain cushion cylinder daisy dashboard debugger decoder denim depot desk detector
    diamond diaper dinghy diploma dipstick dishwasher diver docket dolphin domino doorbell doormat
    drawer dresser drill driveway drumstick duffel dumpling dungeon dynamo easel eclipse elbow
    elevator emerald engine envelope eraser escalator espresso exhaust fabric falcon fan faucet
    feather fence ferry fiddle filament filter firewall flannel flashlight flask flute folder
    footbridge forklift fountain freezer fridge funnel furnace gadget galaxy garage gargoyle garland
    garnet gasket gazebo gearbox generator geyser ginger glacier gondola gravel greenhouse griddle
    grinder guitar gutter hallway hammock hamper handbrake harbor harmonica harness harpoon hatchet
    headlamp hearth hedge helmet hinge hockey holster honey hopper horizon hose hourglass hydrant
    icicle igloo inkwell invoice iron jacket jasmine javelin jigsaw journal jukebox kayak kettle
    keyboard keystone kiln kiosk kitten knapsack knob lab ladder ladle lagoon lantern laptop lasso
    latch lattice lavender lawnmower leash lemon lens lettuce lever library lighthouse limestone
    lobster locker locket lodge loom lumber magnet mailbox mallet mango mantel marble marker
    mattress meadow megaphone melon meteor microphone microwave mileage mirror mitten modem monitor
    mortar mosaic motor mountain muffin mural mushroom napkin necklace needle nest netbook nickel
    notebook nozzle nutmeg oar oatmeal odometer olive orchard orchid oven paddle padlock pagoda
    pallet pancake panel pantry paperclip parachute parcel parka parrot passport pastry patio
    pebble pedal pelican pendulum pepper periscope pewter piano pickle pigeon pillow pinwheel
    pipeline pistachio piston pitcher plank planter plaster plateau platter pliers plum plunger
    pocket podium pollen pomegranate poncho porch portal postcard pottery pouch powder printer
    propeller pulley pump pumpkin puppet quarry quartz quilt quiver rabbit racket radar radiator
    raft railing raincoat raisin ramp razor receipt recorder reel referee reservoir ribbon rickshaw
    rifle rocket roof rooster router rudder rug saddle saffron sailboat salmon sandal sandbox
    satchel saucepan saucer sawdust saxophone scaffold scalpel scanner scarf scooter scraper
    screwdriver scroll sculpture seashell sensor server shampoo shelf shovel shutter sidewalk
    signpost silo skateboard skillet sled sledgehammer slipper smokestack snorkel soapbox socket
    sofa solder spatula speaker spindle spinach sponge spool spreadsheet sprinkler sprocket squash
    stapler starfish statue steeple stencil stethoscope stopwatch stove strainer streetlamp
    submarine subway suitcase sundial sunflower surfboard swamp sweater syringe tablet tadpole
    tambourine tangerine tapestry teapot telescope tent terminal terrace thimble throttle thunder
    ticket timber toaster toboggan tractor trailer trampoline treadmill trellis tricycle trolley
    trombone trophy trowel trumpet tugboat tulip tunnel turbine turnip turret tweezers typewriter
    umbrella utensil vacuum valve vase vault velvet vending veranda vest viaduct villa vinegar
    violin volcano waffle wagon walnut wardrobe warehouse washer watchtower waterfall weathervane
    wheelbarrow whistle wicket widget windmill windshield wingnut wiper wrench xylophone yacht
    yogurt zipper acorn almanac amplifier anvil aquarium arcade asphalt atlas awning bakery
    bandwidth barometer bassoon baton bazaar bedrock beehive birdhouse blacksmith blizzard bobbin
    bonfire bouquet brewery brooch buggy bulldozer bunker butler cafeteria calculator canopy
    carousel cashier castle cathedral checkpoint cheetah chipmunk cinema citadel clinic clover
    cobbler coliseum comet conveyor cornfield coyote crane cufflink cutlery dagger dairy dartboard
    deckchair dentist derrick dewdrop dial dormitory drainpipe dragonfly drumkit dustpan earmuff
    eggplant embassy fairground ferret fiesta fishbowl flagpole flamingo floodgate foghorn fossil
    foxglove freight frigate gallery gatehouse glider goblet gopher granary grapefruit grasshopper
    gravy gumball hairbrush hamster handrail hayloft hazelnut headboard hedgehog heron highway
    hilltop hotplate housekeeper hovercraft iceberg infirmary inkjet jellyfish jetty kennel kernel
    keypad kingfisher lamppost landfill laundry lemonade lifeboat lighter limousine lipstick
    lollipop mansion marathon marina marmalade mascot meatball merchant metronome milkshake minnow
    moat molasses monastery moped mosquito motel mudflat mustard nightstand nutcracker observatory
    octopus omelet orangery ostrich otter outpost overpass paintbrush palace pamphlet panther
    paperweight parsley pavilion peacock peanut pharmacy pheasant pickaxe pinecone pitchfork
    planetarium plywood porcupine porridge pretzel pudding puffin quicksand raccoon rafter
    rattlesnake reindeer rhubarb riverbank rosemary sandpaper sardine sawmill schoolyard scarecrow
    seagull seesaw shipyard shoelace shortbread showroom skylight skyscraper slingshot snowplow
    soybean spaceship sparrow spearmint stagecoach stairwell stadium stockpot stonewall sunroof
    swordfish tabletop taxicab teacup thermos thistle tollbooth tomato toolbox toothbrush tortoise
    townhall treehouse tripod truffle tuxedo vineyard walkway walrus warthog washbasin watermelon
    wetland whirlpool wigwam windowsill woodpecker workbench wristwatch yardstick zucchini
    """.split()
)

# A fixing note's templates: six slots, one per fixing word. Terse, as field notes
# are, and without a word any question template uses (not even "the").
FIX_TEMPLATES = (
    "Rotating {} plus resetting {} cleared everything; {}, {}, {}, {} looked normal afterwards.",
    "Replacing {} by spare {} sorted everything out, after {} got cleaned, {} tightened, "
    "{} oiled, {} checked.",
    "Swapped {} into {}, flushed {}; {}, {}, {} behaved since.",
    "Recalibrated {} against {}, then reseated {} plus {}; {}, {} both settled.",
    "Draining {} then refilling {} worked, once {} got unplugged, {}, {}, {} reattached.",
)
# A symptom note's templates: three slots, for three problem words.
SYMPTOM_TEMPLATES = (
    "Noticed the {} {} during the morning shift; the {} part is unclear so far.",
    "Reported: {} and {} misbehaving near the {}, cause unknown.",
    "Logged a complaint about the {} and the {}; the {} was also flagged.",
    "Investigating odd {} {} behaviour around the {} today.",
)
# Notes that are neither: bookkeeping of everyday work.
NEUTRAL_TEMPLATES = (
    "Wrote down the {} and {} figures for the weekly summary.",
    "Ordered a new {}, a {} and two {} for the storeroom.",
    "Meeting notes: discussed the {} plan and the {} schedule.",
    "Inventory counted the {}, the {}, the {} and the {}.",
    "Moved the {} next to the {} in the storeroom.",
)
NOTE_TEMPLATES = FIX_TEMPLATES + SYMPTOM_TEMPLATES + NEUTRAL_TEMPLATES

# Questions: filler common to every type, two to four problem words.
QUESTION_TEMPLATES = (
    "How do I fix it when the {} {} again?",
    "What helped last time the {} was {}?",
    "Any idea why {} keeps {} {}?",
    "Why is the {} {} {} acting up?",
    "What should I do about {} {} and {} {}?",
    "Is there a known remedy for {} {} with {}?",
    "Who solved the {} {} {} trouble before?",
    "How did we handle {} and {} last time?",
    "What was done when {} {} hit the {} {}?",
    "Has anyone seen {} {} near the {} before?",
    "Any tips for {} {} {} {}?",
    "Why would the {} suddenly fail with {}?",
)

# What a caller would leave out of a question's concepts: function and question
# words, and the filler every question template shares (it names no problem).
QUESTION_STOP_WORDS = frozenset(
    """
    how what why who when which where did does do the and was were is are any anyone has have
    with for about should would could there again before last time it we the fix helped idea
    keeps acting remedy known solved trouble handle done hit seen near tips suddenly fail
    """.split()
)

_ALPHA = re.compile(r"[a-z]+")


@functools.cache
def _stemmer() -> Any:
    import Stemmer  # the bench extra (PyStemmer): imported when a workload is made

    return Stemmer.Stemmer("english")


def tokens(text: str) -> list[str]:
    """Lower-cased alphabetic tokens."""
    return _ALPHA.findall(text.lower())


def stems(text: str) -> set[str]:
    """Snowball (English) stems of a text's alphabetic tokens."""
    return set(_stemmer().stemWords(tokens(text)))


def content_words(question: str) -> list[str]:
    """A question's concepts as a caller would give them: tokens of three letters or more,
    in order, without the question stop words."""
    words = [t for t in tokens(question) if len(t) >= 3 and t not in QUESTION_STOP_WORDS]
    return list(dict.fromkeys(words))


@dataclass(frozen=True)
class Note:
    key: str
    text: str
    role: str  # "fix", "symptom" or "noise"
    type_index: int | None = None


@dataclass(frozen=True)
class Question:
    text: str
    type_index: int
    new_template: bool = False  # held out: a template no training wording of its type used


@dataclass
class ProblemType:
    index: int
    problem_words: list[str]
    fixing_words: list[str]
    training: list[Question] = field(default_factory=list)
    held_out: list[Question] = field(default_factory=list)

    @property
    def fix_key(self) -> str:
        return f"fix-{self.index:03d}"


@dataclass
class Workload:
    seed: int
    types: list[ProblemType]
    notes: list[Note]  # in write order
    held_out_only_templates: list[int]

    def fingerprint(self) -> str:
        """A digest of every note and question: equal workloads, equal digests."""
        parts = [n.key + "\t" + n.text for n in self.notes] + [
            q.text for t in self.types for q in (*t.training, *t.held_out)
        ]
        return "sha256:" + hashlib.sha256("\n".join(parts).encode()).hexdigest()


def vocabulary() -> list[str]:
    """The word list less any word a template or the question stop list also uses."""
    fix_stems = set().union(*(stems(t) for t in FIX_TEMPLATES))
    question_stems = set().union(*(stems(t) for t in QUESTION_TEMPLATES))
    if fix_stems & question_stems:
        raise AssertionError(f"fix and question templates share {fix_stems & question_stems}")
    taken = set().union(*(stems(t) for t in NOTE_TEMPLATES + QUESTION_TEMPLATES))
    taken |= word_stems(QUESTION_STOP_WORDS)
    words = []
    for word in WORDS:  # one word per stem, so no two drawn words are inflections of each other
        stem = _stemmer().stemWord(word)
        if stem not in taken:
            taken.add(stem)
            words.append(word)
    return words


def generate(seed: int = 0, types: int = 40, notes: int = 2000) -> Workload:
    """The workload for ``seed``: ``types`` problem types in a store of ``notes`` notes."""
    rng = random.Random(seed)
    words = vocabulary()
    rng.shuffle(words)
    per_type = PROBLEM_WORDS + FIXING_WORDS
    if types * per_type + MIN_NOISE_WORDS > len(words):
        raise ValueError(f"{types} types need more words than the list's {len(words)}")
    if notes < types * (1 + SYMPTOM_NOTES):
        raise ValueError(f"{notes} notes cannot hold {types} types' fixing and symptom notes")
    problem_types = [
        ProblemType(
            i,
            words[i * per_type : i * per_type + PROBLEM_WORDS],
            words[i * per_type + PROBLEM_WORDS : (i + 1) * per_type],
        )
        for i in range(types)
    ]
    for problem in problem_types:
        if word_stems(problem.problem_words) & word_stems(problem.fixing_words):
            raise AssertionError(f"type {problem.index}'s problem and fixing words share a stem")
    noise_words = words[types * per_type :]
    order = list(range(len(QUESTION_TEMPLATES)))
    rng.shuffle(order)
    held_out_only, shared = order[:HELD_OUT_ONLY_TEMPLATES], order[HELD_OUT_ONLY_TEMPLATES:]
    for problem in problem_types:
        _ask(problem, rng, held_out_only, shared)
    written = _notes(problem_types, noise_words, notes, rng)
    workload = Workload(seed, problem_types, written, sorted(held_out_only))
    leaks = fix_overlaps(workload)
    if leaks:
        raise AssertionError(f"questions share words with their fixing notes: {leaks}")
    return workload


def _fill(template: str, words: Sequence[str]) -> str:
    return template.format(*words)


def _slots(template: str) -> int:
    return template.count("{}")


def _ask(
    problem: ProblemType, rng: random.Random, held_out_only: list[int], shared: list[int]
) -> None:
    """The training and held-out wordings of one type: held-out ones in other word sets."""
    trained = rng.sample(shared, TRAINING)
    seen: set[frozenset[str]] = set()
    for index in trained:
        picked = _pick(problem.problem_words, _slots(QUESTION_TEMPLATES[index]), seen, rng)
        problem.training.append(Question(_fill(QUESTION_TEMPLATES[index], picked), problem.index))
    fresh = rng.sample(held_out_only, HELD_OUT_NEW_TEMPLATES)
    reused = rng.sample(trained, HELD_OUT - HELD_OUT_NEW_TEMPLATES)
    for index in fresh + reused:
        picked = _pick(problem.problem_words, _slots(QUESTION_TEMPLATES[index]), seen, rng)
        text = _fill(QUESTION_TEMPLATES[index], picked)
        problem.held_out.append(Question(text, problem.index, new_template=index in fresh))


def _pick(
    words: Sequence[str], count: int, seen: set[frozenset[str]], rng: random.Random
) -> list[str]:
    """``count`` of ``words`` in a random order, as a set no earlier wording used."""
    while True:
        picked = rng.sample(list(words), count)
        if frozenset(picked) not in seen:
            seen.add(frozenset(picked))
            return picked


def _notes(
    problem_types: Sequence[ProblemType], noise_words: Sequence[str], total: int, rng: random.Random
) -> list[Note]:
    """Every type's fixing and symptom notes and distractors up to ``total``, shuffled."""
    notes = []
    for problem in problem_types:
        fixing = rng.sample(problem.fixing_words, FIXING_WORDS)
        notes.append(
            Note(problem.fix_key, _fill(rng.choice(FIX_TEMPLATES), fixing), "fix", problem.index)
        )
        for n in range(SYMPTOM_NOTES):
            words = rng.sample(problem.problem_words, 3)
            notes.append(
                Note(
                    f"symptom-{problem.index:03d}-{n}",
                    _fill(SYMPTOM_TEMPLATES[n % len(SYMPTOM_TEMPLATES)], words),
                    "symptom",
                    problem.index,
                )
            )
    texts = {n.text for n in notes}
    while len(notes) < total:
        template = rng.choice(NOTE_TEMPLATES)
        text = _fill(template, rng.sample(list(noise_words), _slots(template)))
        if text not in texts:
            texts.add(text)
            notes.append(Note(f"noise-{len(notes):05d}", text, "noise"))
    rng.shuffle(notes)
    return notes


def fix_overlaps(workload: Workload) -> list[tuple[str, set[str]]]:
    """(question, shared stems) for every question sharing a stem with its fixing note."""
    fixes = {n.type_index: stems(n.text) for n in workload.notes if n.role == "fix"}
    found = []
    for problem in workload.types:
        for question in (*problem.training, *problem.held_out):
            shared = stems(question.text) & fixes[problem.index]
            if shared:
                found.append((question.text, shared))
    return found


def word_stems(words: Iterable[str]) -> set[str]:
    """The Snowball stems of some words."""
    return set(_stemmer().stemWords(list(words)))
