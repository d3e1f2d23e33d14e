"""1D-convolutional text classifier over token ids (4 topics).

Exercises: nn.Embedding with padding_idx, moving channels for Conv1d with
x.permute(0, 2, 1), parallel Conv1d branches with different kernel sizes,
global max pooling over time via .max(dim=2).values, a mean-over-time bag of
embeddings branch, torch.cat of the features, Dropout and a Linear head,
AdamW with weight decay kept off biases/embeddings via parameter groups.
"""
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

VOCAB_SIZE = 1000
MAX_LEN = 50
NUM_CLASSES = 4
INPUT_SHAPE = (MAX_LEN,)
INPUT_DTYPE = "int64"  # token ids in [0, VOCAB_SIZE), 0 is padding
EPOCHS = 3


class TextCNN(nn.Module):
    def __init__(self, vocab_size=VOCAB_SIZE, embed_dim=32, num_filters=32, num_classes=NUM_CLASSES):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.conv3 = nn.Conv1d(embed_dim, num_filters, kernel_size=3, padding=1)
        self.conv5 = nn.Conv1d(embed_dim, num_filters, kernel_size=5, padding=2)
        self.dropout = nn.Dropout(0.3)
        self.fc = nn.Linear(2 * num_filters + embed_dim, num_classes)

    def forward(self, tokens):
        emb = self.embedding(tokens)  # (N, T, E)
        # mean over the non-padding positions: a bag-of-embeddings feature
        mask = (tokens != 0).unsqueeze(-1).float()
        bag = (emb * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
        x = emb.permute(0, 2, 1)  # Conv1d wants (N, E, T)
        c3 = F.relu(self.conv3(x)).max(dim=2).values
        c5 = F.relu(self.conv5(x)).max(dim=2).values
        features = torch.cat([c3, c5, bag], dim=1)
        return self.fc(self.dropout(features))


def build_model(vocab_size=VOCAB_SIZE, num_classes=NUM_CLASSES):
    return TextCNN(vocab_size=vocab_size, num_classes=num_classes)


def make_data(n=800, seed=0):
    """Each topic owns a band of 'keyword' ids; documents are padded to MAX_LEN."""
    rng = np.random.RandomState(seed)
    x = np.zeros((n, MAX_LEN), dtype="int64")
    y = rng.randint(0, NUM_CLASSES, size=n)
    common, band = 600, 100
    for i, topic in enumerate(y):
        length = rng.randint(15, MAX_LEN + 1)
        doc = rng.randint(1, common, size=length)  # words every topic uses
        keywords = rng.rand(length) < 0.2
        doc[keywords] = common + topic * band + rng.randint(0, band, size=keywords.sum())
        x[i, :length] = doc
    return torch.from_numpy(x), torch.from_numpy(y.astype("int64"))


def main():
    torch.manual_seed(0)
    x, y = make_data()
    train_loader = DataLoader(TensorDataset(x[:640], y[:640]), batch_size=32, shuffle=True)
    val_loader = DataLoader(TensorDataset(x[640:], y[640:]), batch_size=80)

    model = build_model()
    # the usual AdamW recipe: no weight decay on biases and embeddings
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        (no_decay if name.endswith("bias") or name.startswith("embedding") else decay).append(param)
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
        lr=1e-2,
    )
    criterion = nn.CrossEntropyLoss(label_smoothing=0.05)

    for epoch in range(EPOCHS):
        model.train()
        for tokens, labels in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(tokens), labels)
            loss.backward()
            optimizer.step()

        model.eval()
        correct = 0
        with torch.no_grad():
            for tokens, labels in val_loader:
                correct += (model(tokens).argmax(dim=-1) == labels).sum().item()
        print(f"epoch {epoch + 1}: last batch loss {loss.item():.4f} val acc {correct / 160:.3f}")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "text_cnn.pt")
        torch.save(model.state_dict(), path)
        model = build_model()
        model.load_state_dict(torch.load(path))
    model.eval()
    with torch.no_grad():
        probs = F.softmax(model(x[640:644]), dim=-1)
    print("class probabilities:")
    print(probs.numpy().round(3))


if __name__ == "__main__":
    main()
