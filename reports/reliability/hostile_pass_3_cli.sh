#!/usr/bin/env bash
# Hostile pass over what issue 55 changed (reports/reliability/hostile_pass_3.md). Each case: name, then the command;
# prints rc and the first 2 lines of stderr. It ran in two parts (the first hit its time limit), shown here as one.
B=/work/main/build/bin
T=/work/freeze/work/after/transformer/checkpoints/checkpoint_last.pt
R=/work/freeze/work/after/rnn/checkpoints/checkpoint_last.pt
C=/work/main/configs/multi30k_de_en_transformer.yaml
D=/work/main/data/multi30k
W=/tmp/h/w; rm -rf $W; mkdir -p $W; cd $W
zcat $D/test_2016_flickr.de.gz | head -20 > in.txt
case_() { local name="$1"; shift; local out; out=$( "$@" 2>&1 >/dev/null ); local rc=$?; printf '%s\trc=%s\t%s\n' "$name" "$rc" "$(echo "$out" | grep -v '^$' | head -2 | tr '\n' ' ' | cut -c1-260)"; }
# --- model keys (issue 54)
case_ cfg_d_model_text $B/nmtzoo-config $C --set model.d_model=abc
case_ cfg_d_model_zero $B/nmtzoo-config $C --set model.d_model=0
case_ cfg_d_model_float $B/nmtzoo-config $C --set model.d_model=2.5
case_ cfg_heads_divide $B/nmtzoo-config $C --set model.heads=7
case_ cfg_typo_key $B/nmtzoo-config $C --set model.d_modle=256
case_ cfg_attention_bad $B/nmtzoo-config $C --set model.arch=rnn_bahdanau_small --set model.attention=cosine
case_ cfg_attention_list $B/nmtzoo-config $C --set 'model.attention=[additive]'
case_ cfg_norm_empty $B/nmtzoo-config $C --set model.norm=
case_ cfg_big_int $B/nmtzoo-config $C --set model.d_model=99999999999999999999
case_ cfg_rnn_key_on_transformer $B/nmtzoo-config $C --set model.hidden_dim=7
case_ cfg_unknown_arch $B/nmtzoo-config $C --set model.arch=transfomer
printf 'model:\n  arch: rnn\n  cell: [gru]\n' > bad.yaml
case_ cfg_yaml_list_value $B/nmtzoo-config bad.yaml
printf 'model:\n  d_model: 1e3\n' > sci.yaml
case_ cfg_sci_int $B/nmtzoo-config sci.yaml
case_ cfg_reference $B/nmtzoo-config --reference
# --- outputs (8, 9, 10, 12)
case_ out_dev_null $B/nmtzoo-translate -c $T -i in.txt -o /dev/null -q
ls -la /dev/null | cut -c1-10
mkfifo fifo; (cat fifo > fifo.out &) ; case_ out_fifo $B/nmtzoo-translate -c $T -i in.txt -o fifo -q; sleep 1; wc -l < fifo.out
case_ out_is_checkpoint $B/nmtzoo-translate -c $T -i in.txt -o $T -q
cp $T m.pt; case_ weights_export_onto_itself $B/nmtzoo-weights export m.pt m.pt
cmp -s m.pt $T && echo "m.pt intact"
ln -sf target.txt link.txt; case_ out_symlink $B/nmtzoo-translate -c $T -i in.txt -o link.txt -q; ls -la link.txt | cut -c1-80 | awk '{print $1, $NF}'; wc -l < target.txt
case_ out_stats_onto_input $B/nmtzoo-translate -c $T -i in.txt -o o.txt --stats in.txt -q
case_ out_dir $B/nmtzoo-translate -c $T -i in.txt -o /tmp -q
case_ out_in_missing_dir $B/nmtzoo-translate -c $T -i in.txt -o /nonexistent/x.txt -q
case_ out_block_dev $B/nmtzoo-translate -c $T -i in.txt -o /dev/loop0 -q
cp in.txt inplace.txt; case_ in_place $B/nmtzoo-translate -c $T -i inplace.txt -o inplace.txt -q; wc -l < inplace.txt
ln -sf loop2 loop1; ln -sf loop1 loop2; case_ out_symlink_loop $B/nmtzoo-translate -c $T -i in.txt -o loop1 -q
# SIGTERM during translate with stdin held open
mkfifo stdin.fifo; (sleep 5 > stdin.fifo &) ; $B/nmtzoo-translate -c $T -o term.txt -q < stdin.fifo & P=$!; sleep 3; kill -TERM $P; wait $P; echo "sigterm rc=$?"; ls -a | grep -c "tmp" 
# --- gzip (14)
zcat $D/test_2016_flickr.de.gz | gzip > full.gz; head -c 6000 full.gz > cut.gz
case_ gz_truncated_translate $B/nmtzoo-translate -c $T -i cut.gz -o cut.out -q
cp full.gz crc.gz; printf '\x00' | dd of=crc.gz bs=1 seek=$(( $(stat -c%s crc.gz) - 6 )) conv=notrunc 2>/dev/null
case_ gz_bad_crc_translate $B/nmtzoo-translate -c $T -i crc.gz -o crc.out -q
zcat $D/test_2016_flickr.en.gz | gzip | head -c 8000 > ref_cut.gz
zcat $D/test_2016_flickr.en.gz > hyp.txt
case_ gz_truncated_reference $B/nmtzoo-evaluate hyp.txt ref_cut.gz
(cat full.gz; cat full.gz) > two.gz; case_ gz_two_members $B/nmtzoo-translate -c $T -i <(zcat two.gz | head -3) -o two.out -q
printf 'not gzip at all' > fake.gz; case_ gz_plain_named_gz $B/nmtzoo-translate -c $T -i fake.gz -o fake.out -q
: > empty.gz; case_ gz_empty_file $B/nmtzoo-translate -c $T -i empty.gz -o empty.out -q; wc -l < empty.out
# --- item 18 limits
case_ min_len_big $B/nmtzoo-translate -c $T -i in.txt -o ml.txt --min-len 600 -q; grep -c . ml.txt
case_ temperature_huge $B/nmtzoo-translate -c $T -i in.txt -o t.txt --sampling --temperature 1e39 -q
case_ temperature_nan $B/nmtzoo-translate -c $T -i in.txt -o t.txt --sampling --temperature nan -q
case_ unk_penalty_huge $B/nmtzoo-translate -c $T -i in.txt -o u.txt --unk-penalty -1e39 -q
python3 -c "print('Ein Mann.\t' + ' '.join(['the']*1500))" > longprefix.tsv
case_ prefix_1500 $B/nmtzoo-translate -c $T -i longprefix.tsv --input-format tsv -o lp.txt -q
case_ max_len_b_zero $B/nmtzoo-translate -c $T -i in.txt -o mlb.txt --max-len-a 0 --max-len-b 0 -q; grep -c . mlb.txt
case_ alpha_huge $B/nmtzoo-translate -c $T -i in.txt -o a.txt --alpha 1e30 -q
# --- run start (17, 19)
case_ init_from_missing $B/nmtzoo-prepare $C --set training.output_dir=/tmp/h/w/run1 --set training.init_from=/nonexistent.pt -q
ls /tmp/h/w/run1 2>&1 | tr '\n' ' '; echo
for d in /tmp/h/w/in.txt/run /proc/run /sys/run; do case_ "output_dir $d" $B/nmtzoo-train --config $C --set training.output_dir=$d; done
