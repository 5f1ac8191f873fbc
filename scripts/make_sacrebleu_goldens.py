#!/usr/bin/python3
"""Golden BLEU and chrF scores from sacreBLEU itself, for tests/metrics/sacrebleu_goldens_test.cpp.

    /usr/bin/python3 scripts/make_sacrebleu_goldens.py SACREBLEU_SRC [--make-inputs]

SACREBLEU_SRC is a checkout of github.com/mjpost/sacrebleu at tag v2.6.0 (its `sacrebleu/version.py`
is written by setuptools-scm at install time; this script writes it when it is missing). It needs
what sacreBLEU imports (`scripts/setup.sh --with-sacrebleu`); the tests need none of it: they read
the committed goldens.

Inputs are tests/data/sacrebleu/{hyp,ref1,ref2}.txt: 150 Multi30k test_2016_flickr English lines
(perturbed: words dropped, case changed, tokenized periods, some emptied) and 20 hand-written
Chinese lines, against two reference streams with empty lines in both. --make-inputs rebuilds them
from data/multi30k (they are committed; only needed to change them).
"""
import gzip
import json
import os
import sys

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


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    source = os.path.abspath(sys.argv[1])
    version_file = os.path.join(source, "sacrebleu", "version.py")
    if not os.path.exists(version_file):
        with open(version_file, "w") as f:
            f.write('__version__ = "2.6.0"\n')
    sys.path.insert(0, source)
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


if __name__ == "__main__":
    main()
