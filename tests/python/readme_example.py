# SPDX-License-Identifier: MIT
import nmtzoo

translator = nmtzoo.Translator("runs/multi30k_quickstart/checkpoints/checkpoint_best.pt", threads=2)
sources = ["Zwei Hunde spielen im Schnee.", "Ein Mann fährt Fahrrad."]
for result in translator.translate_batch(sources, beam=5, nbest=2, length_penalty="wu", alpha=0.6):
    for text, score in zip(result.hypotheses, result.scores):
        print(f"{score:8.3f}  {text}")
best = [result.hypotheses[0] for result in translator.translate_batch(sources)]
for scored in translator.score_batch(sources, best):
    print(f"{scored.log_prob:8.3f}", " ".join(f"{t}:{p:.2f}" for t, p in zip(scored.tokens, scored.token_log_probs)))
