#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Golden BLEU, chrF and TER results from sacreBLEU itself, for the tests in
tests/metrics/sacrebleu_suite_test.cpp and tests/metrics/ter_test.cpp.

    /usr/bin/python3 scripts/make_sacrebleu_goldens.py SACREBLEU_SRC [--make-inputs]

SACREBLEU_SRC is a checkout of github.com/mjpost/sacrebleu at tag v2.6.0 (its `sacrebleu/version.py`
is written by setuptools-scm at install time; this script writes it when it is missing). It needs
what sacreBLEU imports (`scripts/setup.sh --with-sacrebleu`); the tests need none of it: they read
the committed goldens.

Inputs are tests/data/sacrebleu/{hyp,ref1,ref2}.txt: 150 Multi30k test_2016_flickr English lines
(perturbed: words dropped, case changed, tokenized periods, some emptied) and 20 hand-written
Chinese lines, against two reference streams with empty lines in both. --make-inputs rebuilds them
from data/multi30k (they are committed; only needed to change them).

Outputs, all in tests/data/sacrebleu/:
  bleu_chrf_goldens.jsonl  BLEU and chrF corpus scores, score lines and sentence scores.
  ter_goldens.jsonl        TER: "tokenize" records (TercomTokenizer on TER_TOKENIZER_INPUTS) and
                           "score" records (corpus score, score line, short signature, sentence
                           scores), each for all 16 combinations of case_sensitive, normalized,
                           no_punct and asian_support, the scores on ref1 and on ref1+ref2.
  ter_stress.jsonl         lib_ter.translation_edit_rate on 300 word sequences made from the
                           reference lines by a seeded random (blocks moved, shuffled,
                           duplicated, dropped; very long and very short lines), with its edits
                           and reference length: the shift search and the beam under load.
"""
import gzip
import json
import os
import sys

import sacrebleu_source

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "sacrebleu")

ZH_REFS = [
    "我们今天去公园散步。", "他说：“你好，世界！”", "这本书的价格是３５．５元。", "２０２６年１１月，天气很冷。",
    "请把门关上，谢谢。", "一只狗在雪地里奔跑。", "两个孩子在海边玩沙子。", "她穿着红色的裙子，站在桥上。",
    "一位老人正在读报纸……", "Ａ组和Ｂ组的比赛结果是３：２。", "我喜欢喝茶，不喜欢喝咖啡。",
    "这是一个测试 sentence with English words.", "他们在厨房里做饭——非常忙。", "《红楼梦》是一部伟大的小说。",
    "价格：€20 或 $25？", "男人骑着自行车穿过城市。", "小猫躺在沙发上睡觉。", "音乐会将在晚上八点开始。",
    "ｈｅｌｌｏ，ｗｏｒｌｄ。", "一群人在街上跳舞、唱歌。",
]
ZH_HYPS = [
    "我们今天去公园走路。", "他说：“你好！”", "这本书的价格是３５元。", "２０２６年１１月，天气冷。", "请关门，谢谢。",
    "一只狗在雪里跑。", "两个孩子在海边玩。", "她穿着红裙子站在桥上。", "老人在读报纸。", "Ａ组和Ｂ组的结果是３：２。",
    "我喜欢茶，不喜欢咖啡。", "这是一个测试 sentence with english words .", "他们在厨房做饭，很忙。",
    "《红楼梦》是伟大的小说。", "价格：€20或$25?", "一个男人骑自行车穿过城市。", "猫躺在沙发上睡觉。",
    "音乐会晚上八点开始。", "hello，world。", "人们在街上跳舞唱歌。",
]


def make_inputs():
    def read(name):
        path = os.path.join(ROOT, "data", "multi30k", name)
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return [line.rstrip("\n") for line in f][:150]

    def perturb(line, i):
        if i % 7 == 3:
            return ""
        words = [w for j, w in enumerate(line.split()) if (j + i) % 5 != 4]
        if i % 4 == 1 and words:
            words[0] = words[0].lower()
        if i % 6 == 2:
            words = [w.upper() if j == 1 else w for j, w in enumerate(words)]
        text = " ".join(words)
        return text.replace(".", " .") if i % 9 == 5 else text

    en, en2 = read("test_2016_flickr.en.gz"), read("test_2017_flickr.en.gz")
    hyp = [perturb(line, i) for i, line in enumerate(en)] + ZH_HYPS
    ref1 = [r if i % 13 != 6 else "" for i, r in enumerate(en + ZH_REFS)]
    ref2 = [e if i % 11 else "" for i, e in enumerate(en2)]
    ref2 += [z[::-1] if i % 3 else "" for i, z in enumerate(ZH_REFS)]
    for name, lines in (("hyp", hyp), ("ref1", ref1), ("ref2", ref2)):
        with open(os.path.join(DATA, name + ".txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


def read_lines(name):
    # As sacrebleu.py reads files: each line right-stripped.
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return [line.rstrip() for line in f]


# TER ---------------------------------------------------------------------------------------------

TER_OPTION_NAMES = ("case_sensitive", "normalized", "no_punct", "asian_support")

# What TercomTokenizer's regular expressions treat specially: XML entities, possessives, periods,
# commas and dashes next to digits, newlines, every ASCII punctuation character, the CJK blocks
# and punctuation it splits or removes, kana runs (whose substitutions never fire), case mapping.
TER_TOKENIZER_INPUTS = [
    "", "   ", ".", "a b c d.", "A B C D.", "A ; B ) C : D.", "a b (c) d.", "Jim's car.", "4.2",
    "Jim's car's wheel's", "'s", "x's's y 's", "It's 4.2, 3,000.50 and 1-2 -3 a-b 5- 7.-8",
    "a.b,c .5 ,7 x. y, 1.a a.1 1,a a,1", "...", "..,,", "e.g. U.S.A. 1..2 a--b", "a.. b,,. 3..4",
    "&quot;hi&quot; &amp;lt; &AMP; &gt;&lt; &amp;amp; &quot",
    "&amp;quot; &amp;gt;&amp;&quot;", "line one\n-continued\nnext\n- x",
    "tab\tsep  multiple   spaces\u00a0nbsp\u3000ideographic", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
    "(parens) [brackets] {braces} <angle> |pipe| ~tilde^ `back` _under_ @at #hash $5 %pct",
    "美众院公布对特", "りの拳銃を持", "ひらがなだけ", "カタカナだけ", "ㇰㇱㇲ", "ひらがなカタカナ漢字",
    "㈱㍻ ㋐ 㐀 䶿 一 鿿", "豈更 ︰︱ ⺀⺁ ㇀㇁ 㼢㼣", "、。〈〉《》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟",
    "｡｢｣､･ ・ ．，？：；！＂（） ＡＢＣ１２３", "东京タワーは高い。テスト、テスト。", "中文English混合123。",
    "他说：“你好，世界！”", "这本书的价格是３５．５元。", "价格：€20 或 $25？", "Ⅷ İstanbul ΣΑΣ ΟΔΟΣ.",
    "Straße, ÉCOLE; naïve (café).", "a\u2028b\u0085c\x1cd",
]


def ter_option_combinations():
    for bits in range(16):
        yield {name: bool(bits >> k & 1) for k, name in enumerate(TER_OPTION_NAMES)}


def write_ter_goldens(hyps, ref_sets):
    from sacrebleu.metrics import TER
    from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer

    cases = []
    for options in ter_option_combinations():
        tokenizer = TercomTokenizer(**options)
        cases.append({"kind": "tokenize", "options": options, "inputs": TER_TOKENIZER_INPUTS,
                      "outputs": [tokenizer(s) for s in TER_TOKENIZER_INPUTS]})
    for refs_name, refs in ref_sets.items():
        for options in ter_option_combinations():
            metric = TER(**options)
            score = metric.corpus_score(hyps, refs)
            signature = metric.get_signature()
            sentences = [metric.sentence_score(h, [r[i] for r in refs]).score
                         for i, h in enumerate(hyps)]
            cases.append({"kind": "score", "options": options, "refs": refs_name,
                          "score": score.score, "num_edits": score.num_edits,
                          "ref_length": score.ref_length,
                          "line": score.format(width=2, signature=signature.format()),
                          "short_signature": signature.format(short=True),
                          "sentence_scores": sentences})
    with open(os.path.join(DATA, "ter_goldens.jsonl"), "w", encoding="utf-8") as f:
        for case in cases:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases written to {DATA}/ter_goldens.jsonl")


def ter_stress_pairs():
    """300 (how, hyp words, ref words), deterministic: seeded random over the reference lines."""
    import random

    rng = random.Random(20260)
    english = [line.split() for name in ("ref1.txt", "ref2.txt") for line in read_lines(name)[:150]
               if line.split()]
    chinese = [list(line) for line in read_lines("ref1.txt")[150:] if line]
    vocabulary = sorted({word for words in english for word in words})

    def sentence():
        return list(rng.choice(chinese if rng.random() < 0.15 else english))

    def long_sentence(min_words):
        words = []
        while len(words) < min_words:
            words += rng.choice(english)
        return words

    def move_block(words):
        if len(words) < 2:
            return words
        length = rng.randint(1, min(12, len(words) - 1))
        start = rng.randrange(len(words) - length + 1)
        block, rest = words[start:start + length], words[:start] + words[start + length:]
        target = rng.randrange(len(rest) + 1)
        return rest[:target] + block + rest[target:]

    def substitute(words, count):
        words = list(words)
        for _ in range(count):
            if words:
                words[rng.randrange(len(words))] = rng.choice(vocabulary)
        return words

    def shuffle_blocks(words, max_block):
        blocks, i = [], 0
        while i < len(words):
            size = rng.randint(1, max_block)
            blocks.append(words[i:i + size])
            i += size
        rng.shuffle(blocks)
        return [word for block in blocks for word in block]

    def duplicate(words, times):
        words = list(words)
        for _ in range(times):
            length = rng.randint(1, min(6, len(words)))
            start = rng.randrange(len(words) - length + 1)
            target = rng.randrange(len(words) + 1)
            words = words[:target] + words[start:start + length] + words[target:]
        return words

    def drop(words, fraction):
        kept = [word for word in words if rng.random() >= fraction]
        return kept or words[:1]

    def reverse_span(words):
        if len(words) < 2:
            return words[::-1]
        start = rng.randrange(len(words) - 1)
        end = rng.randint(start + 2, len(words))
        return words[:start] + words[start:end][::-1] + words[end:]

    def repetitive():
        symbols = rng.sample(["a", "b", "c", "d", "e"], rng.randint(2, 4))
        return [rng.choice(symbols) for _ in range(rng.randint(5, 40))]

    pairs = []

    def add(how, count, make):
        for _ in range(count):
            hyp, ref = make()
            pairs.append((how, hyp, ref))

    def edited(transform):
        def make():
            ref = sentence()
            return transform(ref), ref
        return make

    add("block moved", 40, edited(lambda w: substitute(move_block(w), rng.randint(0, 2))))
    add("blocks moved", 40, edited(lambda w: drop(substitute(
        move_block(move_block(move_block(w))), rng.randint(0, 3)), 0.1)))
    add("shuffled", 25, edited(lambda w: rng.sample(w, len(w))))
    add("blocks shuffled", 30, edited(lambda w: shuffle_blocks(w, rng.randint(2, 5))))
    add("duplicated", 25, edited(lambda w: duplicate(w, rng.randint(1, 3))))
    add("dropped", 25, edited(lambda w: substitute(drop(w, rng.uniform(0.1, 0.5)),
                                                   rng.randint(0, 2))))
    add("reversed", 15, edited(reverse_span))
    add("repetitive", 30, lambda: (repetitive(), repetitive()))

    def long_pair():
        ref = long_sentence(rng.randint(50, 130))
        hyp = duplicate(drop(shuffle_blocks(ref, rng.randint(3, 12)), 0.05), 2)
        return hyp, ref
    add("long, blocks shuffled", 20, long_pair)

    # Reference/hypothesis length ratios near and above 50, where the beam widens.
    for hyp_len, ref_len in ((2, 99), (2, 100), (2, 101), (2, 102), (1, 50), (1, 51), (1, 52),
                             (3, 150), (3, 151), (3, 153), (1, 120), (2, 180), (4, 230)):
        ref = long_sentence(ref_len)[:ref_len]
        hyp = rng.sample(ref, hyp_len) if rng.random() < 0.7 else substitute(ref[:hyp_len], 1)
        pairs.append(("short hypothesis", hyp, ref))
    add("short hypothesis", 12, lambda: (
        substitute(sentence()[:rng.randint(1, 3)], rng.randint(0, 1)),
        long_sentence(rng.randint(60, 200))))
    add("short reference", 15, lambda: (long_sentence(rng.randint(60, 200)),
                                        sentence()[:rng.randint(1, 3)]))
    pairs += [("empty", [], []), ("empty hypothesis", [], sentence()),
              ("empty reference", sentence(), []), ("identical", sentence(), None),
              ("tiny", ["a"], ["a"]), ("tiny", ["a"], ["b"]),
              ("tiny", ["a", "b"], ["b", "a"]), ("tiny", ["a"] * 30, ["a"]),
              ("tiny", ["a"], ["a"] * 30), ("tiny", ["a", "b"] * 15, ["b", "a"] * 15)]
    return [(how, hyp, hyp if ref is None else ref) for how, hyp, ref in pairs]


def write_ter_stress():
    from sacrebleu.metrics.lib_ter import translation_edit_rate

    pairs = ter_stress_pairs()
    with open(os.path.join(DATA, "ter_stress.jsonl"), "w", encoding="utf-8") as f:
        for how, hyp, ref in pairs:
            edits, ref_length = translation_edit_rate(hyp, ref)
            f.write(json.dumps({"how": how, "hyp": " ".join(hyp), "ref": " ".join(ref),
                                "edits": edits, "ref_length": ref_length},
                               ensure_ascii=False) + "\n")
    print(f"{len(pairs)} pairs written to {DATA}/ter_stress.jsonl")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sacrebleu_source.prepare(sys.argv[1])
    import sacrebleu
    from sacrebleu.metrics import BLEU, CHRF

    assert sacrebleu.__version__ == "2.6.0", sacrebleu.__version__
    if "--make-inputs" in sys.argv:
        make_inputs()
    hyps = read_lines("hyp.txt")
    ref_sets = {"ref1": [read_lines("ref1.txt")],
                "ref1+ref2": [read_lines("ref1.txt"), read_lines("ref2.txt")]}

    cases = []

    def add(metric_name, options, metric, refs_name):
        refs = ref_sets[refs_name]
        score = metric.corpus_score(hyps, refs)
        signature = metric.get_signature().format()
        sentences = [metric.sentence_score(h, [r[i] for r in refs]).score
                     for i, h in enumerate(hyps)]
        cases.append({"metric": metric_name, "options": options, "refs": refs_name,
                      "score": score.score, "line": score.format(width=2, signature=signature),
                      "sentence_scores": sentences})

    for refs_name in ref_sets:
        for tokenize in ("13a", "intl", "char", "none", "zh"):
            for lowercase in (False, True):
                options = {"tokenize": tokenize, "lowercase": lowercase}
                add("bleu", options, BLEU(effective_order=False, **options), refs_name)
        for smooth in ("none", "floor", "add-k"):
            for value in (None, 0.5):
                options = {"smooth_method": smooth, "smooth_value": value}
                add("bleu", options, BLEU(**options), refs_name)
        for options in ({}, {"word_order": 2}, {"whitespace": True}, {"lowercase": True},
                        {"eps_smoothing": True}, {"char_order": 4, "beta": 1},
                        {"word_order": 2, "lowercase": True, "eps_smoothing": True}):
            add("chrf", options, CHRF(**options), refs_name)

    with open(os.path.join(DATA, "bleu_chrf_goldens.jsonl"), "w", encoding="utf-8") as f:
        for case in cases:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases written to {DATA}/bleu_chrf_goldens.jsonl")

    write_ter_goldens(hyps, ref_sets)
    write_ter_stress()


if __name__ == "__main__":
    main()
